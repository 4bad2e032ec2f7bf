// Explanation: one case at a time, with everything the judge said about it.
import { h, mountRoot, mockBanner, clear, listen } from "./lib/dom.js";
import { renderCase } from "./lib/case.js";
import { navBar } from "./lib/nav.js";

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "explanation");
  const draw = () => {
    clear(root);
    const data = model.get("case");
    root.append(
      ...[
        mockBanner(model.get("is_mock"), model.get("judge")),
        model.get("title") ? h("div", { class: "rl-title" }, model.get("title")) : null,
        h("div", { class: "rl-case" }, navBar(model, "case", data && data.heading), renderCase(data)),
      ].filter(Boolean),
    );
  };
  draw();
  const unlisten = listen(model, ["case", "index", "count", "is_mock", "judge", "title"], draw);
  return () => {
    unlisten();
    clear(el);
  };
}

export default { render };
