// Saving and copying: a download made from text the kernel sent (a Blob URL, so nothing is
// fetched and nothing is parsed as HTML), and a copy to the clipboard with a visible fallback.
import { h } from "./dom.js";

/**
 * Save `text` as a file. Returns the object URL (revoked shortly after the click).
 * @param {string} text @param {string} filename @param {string} mime
 */
export function download(text, filename, mime) {
  const blob = new Blob([text], { type: `${mime};charset=utf-8` });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.download = filename;
  a.href = url; // a blob: URL of our own text, never a URL from model output
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return url;
}

/**
 * Copy text to the clipboard; where the page may not (no permission, no secure context), show
 * the text selected in a box so Ctrl-C copies it.
 * @param {string} text @param {HTMLElement} where element to put the fallback box after
 * @returns {Promise<"copied"|"shown">}
 */
export async function copyText(text, where) {
  try {
    if (!navigator.clipboard) throw new Error("no clipboard");
    await navigator.clipboard.writeText(text);
    return "copied";
  } catch {
    const box = h("textarea", { class: "rl-copy-box", readOnly: true, rows: 8, "aria-label": "case as JSON" });
    box.value = text;
    where.after(box);
    box.focus();
    box.select();
    return "shown";
  }
}
