// Explanation: one case at a time, with everything the judge said about it.
import { h, append, mountRoot, mockBanner, clear, listen } from "./lib/dom.js";
import { renderCase, markdownToggle } from "./lib/case.js";
import { navBar } from "./lib/nav.js";

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "explanation");
  const draw = () => {
    clear(root);
    const data = model.get("case");
    append(root, [
        mockBanner(model.get("is_mock"), model.get("judge")),
        model.get("title") ? h("div", { class: "rl-title" }, model.get("title")) : null,
        h("div", { class: "rl-case" }, h("div", { class: "rl-row" }, navBar(model, "case", data && data.heading), h("span", { class: "rl-grow" }), markdownToggle(model)), renderCase(data, model.get("markdown") !== false)),
    ]);
  };
  draw();
  const unlisten = listen(model, ["case", "index", "count", "is_mock", "judge", "title", "markdown"], draw);
  return () => {
    unlisten();
    clear(el);
  };
}

export default { render };
