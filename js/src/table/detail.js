// The ResultTable's detail pane: the selected case in full (every criterion's level, evidence
// and reasoning), with Prev/Next, the Markdown toggle, Copy JSON and Close.
import { h, clear } from "../lib/dom.js";
import { renderCase, markdownToggle } from "../lib/case.js";
import { copyText } from "../lib/export.js";

/**
 * @param {import("./state.js").TableContext} ctx
 * @param {ReturnType<typeof import("./grid.js").createGrid>} grid
 */
export function createDetail(ctx, grid) {
  const { model, state } = ctx;
  const el = h("div", { class: "rl-detail" });

  function draw() {
    clear(el);
    const data = model.get("detail");
    if (!data || Number(model.get("selected")) < 0) return;
    const copyBtn = h("button", { class: "rl-copy-json", title: "copy this case (inputs, scores, criteria, judge output) as JSON" }, "Copy JSON");
    copyBtn.addEventListener("click", () => {
      copyText(JSON.stringify(data, null, 2), copyBtn.parentElement || copyBtn).then((how) => {
        copyBtn.textContent = how === "copied" ? "Copied ✓" : "Select and copy ↓";
      });
    });
    el.append(
      h(
        "div",
        { class: "rl-case" },
        h(
          "div",
          { class: "rl-nav" },
          h("button", { class: "rl-prev", disabled: state.selectedPos <= 0, onclick: () => grid.move(-1) }, "‹ Prev"),
          h("span", { class: "rl-pos rl-card-name" }, data.heading || ""),
          h("button", { class: "rl-next", disabled: state.selectedPos < 0 || state.selectedPos >= (grid.cache.total ?? 0) - 1, onclick: () => grid.move(1) }, "Next ›"),
          h("span", { class: "rl-grow" }),
          markdownToggle(model),
          copyBtn,
          h(
            "button",
            {
              class: "rl-close",
              onclick: () => {
                state.selectedPos = -1;
                model.set("selected", -1);
                model.save_changes();
                grid.schedule();
              },
            },
            "Close ✕",
          ),
        ),
        renderCase(data, model.get("markdown") !== false),
      ),
    );
  }

  return { el, draw };
}
