// Previous / next navigation over cases: the index trait is the only state.
import { h } from "./dom.js";

/**
 * @param {any} model anywidget model with `index` and `count` traits
 * @param {string} noun
 */
export function navBar(model, noun = "case") {
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
    h("span", { class: "rl-pos" }, count ? `${noun} ${index + 1} of ${count}` : `no ${noun}s`),
    h("button", { class: "rl-next", disabled: index >= count - 1, onclick: () => go(index + 1), title: `next ${noun}` }, "Next ›"),
  );
}
