// Number formatting shared by the views (pure functions: unit-tested).

/** A finite number (a type guard, so callers may treat `v` as a number after it).
 * @param {unknown} v @returns {v is number} */
export const isNum = (v) => typeof v === "number" && Number.isFinite(v);

/** A pointwise score in [0, 1] shown as a percent ("75.0%"): the one display rule for scores;
 * a pairwise score (-1..+1) is a signed percent on -100%..+100% ("+50.0%", "-16.7%"), the unit
 * of its mean everywhere. @param {unknown} v */
export function fmtScore(v, kind = "pointwise") {
  if (!isNum(v)) return "—";
  const text = `${(100 * v).toFixed(1)}%`;
  if (kind === "pairwise") return text === "0.0%" || text === "-0.0%" ? "0.0%" : (v > 0 ? "+" : "") + text;
  return text;
}

/** "33% (1/3)": a rate with the counts behind it. @param {unknown} rate @param {unknown} k @param {unknown} n */
export function fmtRateOf(rate, k, n) {
  if (!isNum(rate)) return "—";
  return isNum(k) && isNum(n) ? `${fmtPct(rate)} (${fmtInt(k)}/${fmtInt(n)})` : fmtPct(rate);
}

/** A standard deviation of 0-1 scores, labelled: "± 12.3% std". @param {unknown} v */
export function fmtStd(v) {
  return isNum(v) ? `± ${(100 * v).toFixed(1)}% std` : "";
}

/**
 * The pass rule beside a pass rate: "31 of 50 with a verdict passed" when the summary carries
 * the counts (`passed`, `verdicts`), else nothing.
 * @param {any} s one summary row
 */
export function fmtPassRule(s) {
  if (!s || !isNum(s.passed) || !isNum(s.verdicts)) return "";
  const without = isNum(s.n) && s.n > s.verdicts ? ` · ${fmtInt(s.n - s.verdicts)} without a verdict` : "";
  return `${fmtInt(s.passed)} of ${fmtInt(s.verdicts)} with a verdict passed${without}`;
}

/** @param {unknown} v */
export function fmtPct(v, digits = 0) {
  return isNum(v) ? `${(100 * v).toFixed(digits)}%` : "—";
}

/** "62% [55–69%]" @param {unknown} rate @param {unknown} low @param {unknown} high */
export function fmtRate(rate, low, high) {
  if (!isNum(rate)) return "—";
  const iv = isNum(low) && isNum(high) ? ` [${(100 * low).toFixed(0)}–${(100 * high).toFixed(0)}%]` : "";
  return fmtPct(rate) + iv;
}

/** @param {unknown} v */
export function fmtInt(v) {
  return isNum(v) ? Math.round(v).toLocaleString("en-US") : "—";
}

/** "1 row", "2 rows": a count with its noun in the right number.
 *  @param {unknown} v @param {string} noun @param {string} [plural] */
export function fmtCount(v, noun, plural) {
  return `${fmtInt(v)} ${v === 1 ? noun : plural ?? `${noun}s`}`;
}

/** @param {unknown} v */
export function fmtCost(v) {
  if (!isNum(v)) return "—";
  return v < 0.01 && v > 0 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

/** @param {unknown} v seconds */
export function fmtSeconds(v) {
  if (!isNum(v)) return "—";
  return v < 1 ? `${Math.round(v * 1000)} ms` : `${v.toFixed(2)} s`;
}

const PAIRWISE_LABELS = new Map([
  [1, "candidate much better"],
  [0.5, "candidate better"],
  [0, "tie"],
  [-0.5, "baseline better"],
  [-1, "baseline much better"],
]);
/** @param {unknown} v */
export function pairwiseLabel(v) {
  return isNum(v) ? PAIRWISE_LABELS.get(v) ?? String(v) : "—";
}
export const PAIRWISE_SCALE = [1, 0.5, 0, -0.5, -1];

/**
 * The CSS modifier for a verdict: pass / fail / win / tie / loss.
 * @param {unknown} verdict
 */
export function verdictClass(verdict) {
  const v = String(verdict ?? "").toLowerCase();
  if (v.startsWith("pass")) return "rl-pass";
  if (v.startsWith("fail")) return "rl-fail";
  if (v.startsWith("candidate")) return "rl-win";
  if (v.startsWith("baseline")) return "rl-loss";
  if (v.startsWith("tie")) return "rl-tie";
  return "";
}
