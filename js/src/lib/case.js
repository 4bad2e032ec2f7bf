// One case, rendered: inputs, images, and per metric the criteria with levels, evidence and
// reasoning, the rationale, errors, the raw judge output (collapsed) and call accounting.
import { h } from "./dom.js";
import { textBlock } from "./markdown.js";
import { fmtScore, fmtInt, fmtSeconds, verdictClass, pairwiseLabel, isNum } from "./format.js";

/**
 * @typedef {{name: string, question?: string, level?: number|null, label?: string|null,
 *   max_level?: number|null, evidence?: string|null, reasoning?: string|null, weight?: number|null,
 *   critical?: number|boolean|null, passed_critical?: boolean|null, checked_by?: string|null,
 *   check?: string|null}} CriterionRow
 */

/** The level chip: YES/NO, or "3/4 · descriptor". @param {CriterionRow} c */
export function levelChip(c) {
  const label = c.label == null ? "" : String(c.label);
  const up = label.toUpperCase();
  if (up === "YES" || up === "NO") return h("span", { class: `rl-badge ${up === "YES" ? "rl-yes" : "rl-no"}` }, up);
  if (c.level == null && !label) return h("span", { class: "rl-badge rl-err" }, "missing");
  const head = c.level == null ? "" : isNum(c.max_level) ? `${c.level}/${c.max_level}` : String(c.level);
  return h("span", {}, h("span", { class: "rl-badge" }, head || label), head && label ? h("span", { class: "rl-muted rl-small" }, ` ${label}`) : null);
}

/** "checked by code · regex /…/" under a criterion answered by code, not the judge (as text).
 * @param {CriterionRow} c */
function codeNote(c) {
  if (c.checked_by !== "code") return null;
  return h("div", { class: "rl-code-check rl-small" }, `checked by code${c.check ? ` · ${c.check}` : ""}`);
}

/** @param {CriterionRow} c */
function criticalNote(c) {
  if (c.critical == null || c.critical === false) return null;
  const failed = c.passed_critical === false;
  const text = failed ? "critical: below minimum" : typeof c.critical === "number" ? `critical (min ${c.critical})` : "critical";
  return h("div", { class: `rl-critical${failed ? " rl-failed" : ""}` }, text);
}

/** @param {CriterionRow[]} rows */
export function criteriaTable(rows, md = true) {
  if (!Array.isArray(rows) || rows.length === 0) return h("div", { class: "rl-muted" }, "No per-criterion verdicts.");
  return h(
    "table",
    { class: "rl-crit" },
    h("thead", {}, h("tr", {}, h("th", { style: "width:28%" }, "Criterion"), h("th", { style: "width:16%" }, "Result"), h("th", { style: "width:7%" }, "Weight"), h("th", {}, "Evidence and reasoning"))),
    h(
      "tbody",
      {},
      rows.map((c) =>
        h(
          "tr",
          { class: "rl-crit-row", dataset: { criterion: String(c.name ?? "") } },
          h("td", {}, h("div", { class: "rl-cname" }, c.name ?? ""), c.question && c.question !== c.name ? h("div", { class: "rl-q" }, c.question) : null, codeNote(c), criticalNote(c)),
          h("td", {}, levelChip(c)),
          h("td", { class: "rl-mono" }, isNum(c.weight) ? String(c.weight) : ""),
          h("td", {}, c.evidence ? h("div", { class: "rl-evidence" }, c.evidence) : null, c.reasoning ? textBlock(c.reasoning, md, "rl-reasoning") : null),
        ),
      ),
    ),
  );
}

/** @param {unknown} raw */
export function rawOutput(raw, open = false) {
  const parts = Array.isArray(raw) ? raw : raw == null || raw === "" ? [] : [raw];
  if (parts.length === 0) return null;
  const summary = parts.length > 1 ? `Raw judge output (${parts.length} calls)` : "Raw judge output";
  return h("details", { class: "rl-raw", open }, h("summary", {}, summary), parts.map((p, i) => [parts.length > 1 ? h("div", { class: "rl-muted rl-small" }, `call ${i + 1}`) : null, h("pre", {}, String(p ?? ""))]));
}

/** @param {any} m */
export function metaLine(m) {
  const items = [];
  if (m.cached) {
    if (m.tokens != null) items.push(`tokens ${fmtInt(m.tokens)}`);
    return h("div", { class: "rl-meta" }, items.map((t) => h("span", {}, t)), h("span", { class: "rl-badge rl-cached", title: "answered from the judge cache: no new call was made" }, "cached"));
  }
  if (m.tokens != null) items.push(`tokens ${fmtInt(m.tokens)}`);
  if (m.latency != null) items.push(`latency ${fmtSeconds(m.latency)}`);
  if (m.attempts != null) items.push(`attempts ${fmtInt(m.attempts)}`);
  if (items.length === 0) return null;
  return h("div", { class: "rl-meta" }, items.map((t) => h("span", {}, t)));
}

/** @param {any} m */
export function scoreHead(m) {
  const pairwise = m.kind === "pairwise";
  return h(
    "div",
    { class: "rl-metric-head" },
    h("span", { class: "rl-metric-name" }, m.name),
    h("span", { class: "rl-muted rl-small" }, m.kind || ""),
    h("span", { class: "rl-metric-score" }, fmtScore(m.score, m.kind)),
    pairwise && isNum(m.score) ? h("span", { class: "rl-muted" }, m.choice || pairwiseLabel(m.score)) : null,
    m.verdict ? h("span", { class: `rl-badge ${verdictClass(m.verdict)}` }, m.verdict) : null,
    m.error ? h("span", { class: "rl-badge rl-err" }, "error") : null,
    pairwise && m.swap_consistent === false ? h("span", { class: "rl-badge rl-warnb" }, "orders disagree") : null,
  );
}

/** @param {any} m one metric's part of a case @param {boolean} [md] show text as Markdown */
export function metricBlock(m, md = true) {
  const pairwise = m.kind === "pairwise";
  return h(
    "div",
    { class: "rl-metric", dataset: { metric: String(m.name) } },
    scoreHead(m),
    m.error ? h("div", { class: "rl-error-box" }, `Judge error: ${m.error}`) : null,
    pairwise ? pairCriteria(m) : criteriaTable(m.criteria, md),
    m.rationale ? [h("div", { class: "rl-h" }, "Rationale"), textBlock(m.rationale, md, "rl-rationale")] : null,
    rawOutput(m.raw_output, Boolean(m.error)),
    metaLine(m),
  );
}

/**
 * Per-criterion comparison for a pairwise metric: the winner (after both orders), evidence, and
 * each side's level when the judge gave one. Rows come from the kernel as `pair_rows`.
 * @param {any} m
 */
export function pairCriteria(m) {
  const rows = Array.isArray(m.pair_rows) ? m.pair_rows : [];
  if (rows.length === 0) return criteriaTable(m.criteria);
  const anyLevels = rows.some((r) => r.candidate || r.baseline);
  const winnerCell = (r) => {
    const w = r.winner || "—";
    return h(
      "td",
      { class: `rl-win-cell ${w === "candidate" ? "rl-c" : w === "baseline" ? "rl-b" : ""}` },
      w,
      r.consistent === false ? h("div", { class: "rl-critical", title: "the two presentation orders picked different winners" }, "orders disagree") : null,
    );
  };
  return h(
    "table",
    { class: "rl-crit rl-pair-crit" },
    h("thead", {}, h("tr", {}, h("th", { style: "width:26%" }, "Criterion"), anyLevels ? [h("th", {}, "Candidate"), h("th", {}, "Baseline")] : null, h("th", { style: "width:13%" }, "Winner"), h("th", {}, "Evidence"))),
    h(
      "tbody",
      {},
      rows.map((r) =>
        h(
          "tr",
          { class: "rl-crit-row", dataset: { criterion: String(r.name ?? "") } },
          h("td", {}, h("div", { class: "rl-cname" }, r.name ?? ""), r.question && r.question !== r.name ? h("div", { class: "rl-q" }, r.question) : null),
          anyLevels ? [h("td", {}, r.candidate ? levelChip(r.candidate) : "—"), h("td", {}, r.baseline ? levelChip(r.baseline) : "—")] : null,
          winnerCell(r),
          h("td", {}, r.evidence ? h("div", { class: "rl-evidence" }, r.evidence) : null, r.evidence_swapped && r.evidence_swapped !== r.evidence ? h("div", { class: "rl-reasoning" }, `swapped order: ${r.evidence_swapped}`) : null),
        ),
      ),
    ),
  );
}

/** @param {any[]} images */
export function imageStrip(images) {
  if (!Array.isArray(images) || images.length === 0) return null;
  return h(
    "div",
    { class: "rl-field" },
    h("div", { class: "rl-field-name" }, "Images"),
    h(
      "div",
      { class: "rl-images" },
      images.map((img) => (img.src ? h("img", { src: img.src, alt: String(img.name ?? "image"), title: String(img.name ?? "") }) : h("div", { class: "rl-text rl-small" }, `${img.name}: ${img.note ?? "image not shown"}`))),
    ),
  );
}

/**
 * The whole case.
 * @param {any} data  {row, title, fields: [{name, text}], images, metrics: [...]}
 */
export function renderCase(data, md = true) {
  if (!data) return h("div", { class: "rl-empty" }, "No case selected.");
  return h(
    "div",
    { class: "rl-case-body" },
    (data.fields || []).map((f) => field(f.name, f.text, md)),
    imageStrip(data.images),
    transcript(data.conversation, data.metrics),
    traceTree(data.trace),
    (data.metrics || []).map((m) => metricBlock(m, md)),
  );
}

/**
 * A named text block (a prompt, a response): Markdown when `md` and the text uses it.
 * @param {string} name @param {unknown} text @param {boolean} [md]
 */
export function field(name, text, md = true) {
  return h("div", { class: "rl-field" }, h("div", { class: "rl-field-name" }, name), textBlock(text, md));
}

/**
 * The "Markdown / raw text" switch of a view: flips the `markdown` trait.
 * @param {any} model
 */
export function markdownToggle(model) {
  const on = model.get("markdown") !== false;
  return h(
    "button",
    {
      class: "rl-md-toggle",
      title: on ? "showing model and judge text as Markdown: click for the raw text" : "showing raw text: click to render Markdown",
      "aria-pressed": on ? "true" : "false",
      onclick: () => {
        model.set("markdown", !on);
        model.save_changes();
      },
    },
    on ? "Markdown ✓" : "Raw text",
  );
}

/**
 * The agent trace a row came from, as an indented tree with the judged span marked.
 * Each span shows the scores it got (this result's, or those its trace file carried).
 * @param {{spans: {span_id: string, name: string, kind: string, status: string,
 *   duration_ms: number|null, depth: number|null, scores?: SpanScore[]}[], highlight: string|null, omitted?: number}|null|undefined} trace
 */
export function traceTree(trace) {
  if (!trace || !Array.isArray(trace.spans) || trace.spans.length === 0) return null;
  const rows = trace.spans.map((s) => {
    const judged = trace.highlight != null && s.span_id === trace.highlight;
    const error = s.status === "error";
    const depth = Math.max(0, Math.min(Number(s.depth) || 0, 32));
    const bits = [s.kind, isNum(s.duration_ms) ? `${Math.round(Number(s.duration_ms))} ms` : null, error ? "error" : null, judged ? "judged" : null];
    return [
      h(
        "div",
        { class: `rl-trace-span${judged ? " rl-trace-judged" : ""}${error ? " rl-trace-error" : ""}`, style: `padding-left:${depth * 16 + 6}px` },
        s.name,
        h("span", { class: "rl-muted rl-small" }, ` ${bits.filter(Boolean).join(" · ")}`),
      ),
      spanScores(s.scores, depth),
    ];
  });
  const more = trace.omitted ? h("div", { class: "rl-muted rl-small" }, `${trace.omitted} more spans not shown`) : null;
  return h("div", { class: "rl-field" }, h("div", { class: "rl-field-name" }, "Trace"), h("div", { class: "rl-trace" }, rows, more));
}

/**
 * @typedef {{role: string, content: string, turn?: number, name?: string, tool_call_id?: string,
 *   tool_calls?: {name: string, arguments: string}[]}} Message
 * @typedef {{turn: number, score: number|null, passed: boolean|null, verdict: string|null,
 *   error: string|null}} TurnResult
 */

/**
 * A per-turn metric's result beside its assistant turn; the worst turn (first in `turns`, which
 * the kernel sorts worst first) is marked.
 * @param {string} metric @param {TurnResult} t @param {boolean} worst
 */
function turnChip(metric, t, worst) {
  const verdict = t.error ? "error" : t.passed === true ? "pass" : t.passed === false ? "fail" : t.verdict || "";
  const cls = t.error ? "rl-err" : t.passed === false ? "rl-no" : t.passed === true ? "rl-yes" : "";
  const title = t.error ? `turn ${t.turn}: ${t.error}` : `${metric}, turn ${t.turn}${t.verdict ? `: ${t.verdict}` : ""}`;
  return h(
    "span",
    { class: `rl-turn-score${worst ? " rl-worst" : ""}`, title, dataset: { metric, turn: String(t.turn) } },
    h("span", { class: "rl-muted rl-small" }, `${metric} `),
    h("span", { class: "rl-mono" }, t.error ? "—" : fmtScore(t.score, "pointwise")),
    verdict ? h("span", { class: `rl-badge ${cls}` }, verdict) : null,
    worst ? h("span", { class: "rl-badge rl-worst-badge" }, "worst turn") : null,
  );
}

/**
 * A row's conversation as a chat transcript: one bubble per message in order, its role on top,
 * its text as plain text (never HTML or Markdown: a line starting `| ` is words, not a table),
 * tool calls as name + arguments, and per-turn scores beside the assistant turns they judged.
 * @param {{messages: Message[], omitted?: number}|null|undefined} conv @param {any[]} [metrics]
 */
export function transcript(conv, metrics) {
  if (!conv || !Array.isArray(conv.messages) || conv.messages.length === 0) return null;
  /** @type {Map<number, HTMLElement[]>} */
  const chips = new Map();
  for (const m of Array.isArray(metrics) ? metrics : []) {
    const turns = Array.isArray(m.turns) ? m.turns : [];
    turns.forEach((/** @type {TurnResult} */ t, i) => {
      const list = chips.get(t.turn) || [];
      list.push(turnChip(String(m.name), t, i === 0 && turns.length > 1));
      chips.set(t.turn, list);
    });
  }
  const bubbles = conv.messages.map((msg, i) => {
    const role = String(msg.role || "?");
    const known = ["user", "assistant", "system", "developer", "tool"].includes(role) ? role : "other";
    let head = role;
    if (msg.name) head += ` · ${msg.name}`;
    if (role === "assistant" && msg.turn != null) head += ` · turn ${msg.turn}`;
    if (role === "tool" && msg.tool_call_id) head += ` · result for ${msg.tool_call_id}`;
    const scores = role === "assistant" && msg.turn != null ? chips.get(Number(msg.turn)) || [] : [];
    const worst = scores.some((c) => c.classList.contains("rl-worst"));
    return h(
      "div",
      { class: `rl-msg rl-msg-${known}${worst ? " rl-msg-worst" : ""}`, dataset: { role, index: String(i + 1) } },
      h("div", { class: "rl-msg-head" }, h("span", { class: "rl-msg-role" }, head), scores.length ? h("span", { class: "rl-turn-scores" }, scores) : null),
      msg.content ? h("div", { class: "rl-msg-text" }, String(msg.content)) : null,
      (msg.tool_calls || []).map((c) =>
        h("div", { class: "rl-msg-call rl-mono rl-small" }, h("span", { class: "rl-msg-call-name" }, `→ ${c.name}`), h("span", {}, `(${c.arguments ?? ""})`)),
      ),
    );
  });
  const more = conv.omitted ? h("div", { class: "rl-muted rl-small" }, `${conv.omitted} more messages not shown`) : null;
  return h("div", { class: "rl-field" }, h("div", { class: "rl-field-name" }, `Conversation (${conv.messages.length + (conv.omitted || 0)} messages)`), h("div", { class: "rl-transcript" }, bubbles, more));
}

/**
 * @typedef {{metric: string, score: number|null, label: string|null, passed: boolean|null,
 *   explanation: string|null, error: string|null, from_trace?: boolean}} SpanScore
 */

/**
 * One score in words: "faithfulness 0.50 fail", "step error: ...".
 * @param {SpanScore} s
 */
export function spanScoreText(s) {
  const bits = [s.metric];
  if (isNum(s.score)) bits.push(Number(s.score).toFixed(2));
  if (s.passed === true || s.passed === false) bits.push(s.passed ? "pass" : "fail");
  else if (s.label) bits.push(s.label);
  if (s.error) bits.push("error");
  return bits.filter(Boolean).join(" ");
}

/**
 * The scores on one span, under it: a chip per metric (green pass, red fail or error), the
 * judge's explanation folded in a <details>. All model text goes in as text nodes.
 * @param {SpanScore[]|undefined} scores @param {number} depth
 */
function spanScores(scores, depth) {
  if (!Array.isArray(scores) || scores.length === 0) return null;
  return h(
    "div",
    { class: "rl-trace-scores", style: `padding-left:${depth * 16 + 22}px` },
    scores.map((s) => {
      const state = s.error ? "rl-err" : s.passed === true ? "rl-pass" : s.passed === false ? "rl-fail" : "rl-tie";
      const chip = h(
        "span",
        { class: `rl-badge rl-trace-score ${state}`, title: s.from_trace ? "from the trace file" : "from this result" },
        spanScoreText(s),
      );
      const why = s.error || s.explanation;
      // a verdict longer than pass/fail ("fail (score below pass mark)") is said in full inside
      const verdict = s.label && (s.passed === true || s.passed === false) && !["pass", "fail"].includes(s.label) ? s.label : null;
      if (!why && !verdict) return h("div", { class: "rl-trace-score-row" }, chip);
      return h(
        "details",
        { class: "rl-trace-score-row" },
        h("summary", {}, chip),
        verdict ? h("div", { class: "rl-trace-verdict rl-small" }, verdict) : null,
        why ? h("div", { class: "rl-trace-why rl-small" }, why) : null,
      );
    }),
  );
}
