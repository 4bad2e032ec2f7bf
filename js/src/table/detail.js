// The ResultTable's detail pane: the selected case in full (every criterion's level, evidence
// and reasoning), with Prev/Next, the Markdown toggle, Copy JSON and Close.
import { h, clear } from "../lib/dom.js";
import { renderCase, markdownToggle } from "../lib/case.js";
import { copyText } from "../lib/export.js";
import { createLabelForm } from "../lib/labels.js";

/**
 * @param {import("./state.js").TableContext} ctx
 * @param {ReturnType<typeof import("./grid.js").createGrid>} grid
 */
export function createDetail(ctx, grid) {
  const { model, state } = ctx;
  // JupyterLab's own keys (j/k move cells, Enter edits) stay out of the labelling pane
  const el = h("div", { class: "rl-detail", tabIndex: 0, "data-lm-suppress-shortcuts": "true", "data-p-suppress-shortcuts": "true" });
  /** @type {ReturnType<typeof createLabelForm> | null} */
  let form = null;
  let formSeq = 0;

  /** The labelling form of the shown row (asked of the kernel), above the case. @param {HTMLElement} slot @param {number} row */
  function loadForm(slot, row) {
    const seq = ++formSeq;
    form = null;
    ctx.rpc.request("label_form", { row }).then(
      (/** @type {any} */ reply) => {
        if (seq !== formSeq) return;
        form = createLabelForm(reply.form, String(model.get("reviewer") || ""), async (labels) => {
          await ctx.rpc.request("save_labels", { labels: labels.map((l) => ({ row, ...l })) });
          ctx.setStatus(`saved ${labels.length} label(s) on row ${row}`);
        });
        slot.replaceChildren(form.el);
      },
      (/** @type {Error} */ err) => {
        if (seq === formSeq) slot.replaceChildren(h("div", { class: "rl-muted rl-small" }, `labels not available: ${err.message}`));
      },
    );
  }

  el.addEventListener("keydown", (e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "j" || e.key === "k") {
      e.preventDefault();
      grid.move(e.key === "j" ? 1 : -1);
      return;
    }
    if (!form) return;
    if (e.key === "Enter") {
      e.preventDefault();
      e.stopPropagation();
      const current = form;
      current.submit().then(
        () => grid.move(1),
        (/** @type {Error} */ err) => ctx.setStatus(`Could not save: ${err.message}`, true),
      );
      return;
    }
    if (form.onKey(e)) {
      e.preventDefault();
      e.stopPropagation();
    }
  });

  function draw() {
    const hadFocus = el.contains(document.activeElement);
    clear(el);
    form = null;
    const data = model.get("detail");
    if (!data || Number(model.get("selected")) < 0) return;
    const slot = h("div", { class: "rl-label-slot" });
    if (model.get("labelling")) loadForm(slot, Number(data.row));
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
        slot,
        renderCase(data, model.get("markdown") !== false),
      ),
    );
    // keep the keyboard on the case being labelled (j/k, verdict keys, Enter)
    if (hadFocus && !el.contains(document.activeElement)) el.focus({ preventScroll: true });
  }

  return { el, draw };
}
