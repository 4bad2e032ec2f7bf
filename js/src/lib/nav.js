// Previous / next navigation over cases: the index trait is the only state.
import { h } from "./dom.js";

/**
 * @param {any} model anywidget model with `index` and `count` traits
 * @param {string} noun
 * @param {string} [label] what to say between the buttons (default "case 3 of 10")
 */
export function navBar(model, noun = "case", label = "") {
  const count = Number(model.get("count") || 0);
  const index = Number(model.get("index") || 0);
  /** @param {number} i */
  const go = (i) => {
    if (i < 0 || i >= count) return;
    model.set("index", i);
    model.save_changes();
  };
  return h(
    "div",
    { class: "rl-nav" },
    h("button", { class: "rl-prev", disabled: index <= 0, onclick: () => go(index - 1), title: `previous ${noun}` }, "‹ Prev"),
    h("span", { class: "rl-pos" }, label || (count ? `${noun} ${index + 1} of ${count}` : `no ${noun}s`)),
    h("button", { class: "rl-next", disabled: index >= count - 1, onclick: () => go(index + 1), title: `next ${noun}` }, "Next ›"),
  );
}
