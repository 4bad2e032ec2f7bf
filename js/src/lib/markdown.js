// Model and judge text as CommonMark (markdown-it, the same spec as markdown-it-py in the static
// report), built into DOM nodes from markdown-it's token stream: no HTML string is ever parsed.
// Raw HTML in the text stays text (html: false); links keep only http(s)/mailto targets and open
// with rel=noopener; images become their alt text (a view fetches nothing a model named).
import MarkdownIt from "markdown-it";
import { h } from "./dom.js";

const md = new MarkdownIt("commonmark", { html: false, linkify: false, typographer: false });
const SAFE_LINK = /^(https?:|mailto:)/i;
md.validateLink = (url) => SAFE_LINK.test(String(url).trim());
const MAX_CHARS = 200_000;

/** Block and inline tags a token may open (anything else is ignored, its text kept). */
const TAGS = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "em", "strong", "s", "table", "thead", "tbody", "tr", "th", "td", "a"]);

/**
 * @param {any[]} tokens
 * @param {Node} root
 */
function build(tokens, root) {
  /** @type {Node[]} */
  const stack = [root];
  const top = () => stack[stack.length - 1];
  for (const t of tokens) {
    if (t.type === "inline") {
      build(t.children || [], top());
      continue;
    }
    if (t.nesting === 1) {
      const tag = TAGS.has(t.tag) ? t.tag : "span";
      let el;
      if (tag === "a") {
        const href = String(t.attrGet("href") || "");
        el = SAFE_LINK.test(href.trim()) ? h("a", { rel: "noopener noreferrer nofollow", target: "_blank" }) : h("span", { class: "rl-md-link" });
        if (SAFE_LINK.test(href.trim())) el.setAttribute("href", href.trim());
      } else if (tag === "ol" && t.attrGet("start")) {
        el = h("ol", { start: String(Number(t.attrGet("start")) || 1) });
      } else el = h(tag, {});
      top().appendChild(el);
      stack.push(el);
    } else if (t.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else {
      switch (t.type) {
        case "text":
          top().appendChild(document.createTextNode(t.content));
          break;
        case "code_inline":
          top().appendChild(h("code", {}, t.content));
          break;
        case "code_block":
        case "fence":
          top().appendChild(h("pre", {}, h("code", {}, t.content)));
          break;
        case "softbreak":
          top().appendChild(document.createTextNode("\n"));
          break;
        case "hardbreak":
          top().appendChild(h("br", {}));
          break;
        case "hr":
          top().appendChild(h("hr", {}));
          break;
        case "image":
          top().appendChild(h("span", { class: "rl-md-img" }, `[image: ${t.content || (t.children || []).map((c) => c.content).join("")}]`));
          break;
        case "html_inline":
        case "html_block":
          top().appendChild(document.createTextNode(t.content)); // never reached with html: false
          break;
        default:
          if (t.content) top().appendChild(document.createTextNode(t.content));
      }
    }
  }
}

/**
 * Text as Markdown nodes inside a `.rl-md` block.
 * @param {unknown} text
 * @returns {HTMLElement}
 */
export function markdown(text) {
  const src = text == null ? "" : String(text);
  const box = h("div", { class: "rl-md" });
  if (src.length > MAX_CHARS) {
    box.classList.add("rl-raw-text");
    box.append(src);
    return box;
  }
  build(md.parse(src, {}), box);
  return box;
}

/** Does this text use any Markdown worth rendering? (plain prose stays a pre-wrap block) @param {string} s */
export function looksLikeMarkdown(s) {
  // bounded repeats and a bounded prefix: no quadratic scan of hostile input ("[[[[...")
  return /(^|\n)\s{0,3}(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|```|~~~)|\*\*[^*\n]{1,300}\*\*|__[^_\n]{1,300}__|`[^`\n]{1,300}`|\[[^\]\n]{1,300}\]\([^)\s]{1,500}\)|(^|\n)\|[^\n]{0,2000}\|/.test(String(s).slice(0, 20_000));
}

/**
 * A model/judge text block: Markdown when `enabled` and the text uses it, else pre-wrap text.
 * @param {unknown} text
 * @param {boolean} enabled
 * @param {string} [cls]
 */
export function textBlock(text, enabled, cls = "") {
  const s = text == null ? "" : String(text);
  if (enabled && looksLikeMarkdown(s)) {
    const box = markdown(s);
    box.className = `rl-text rl-md${cls ? ` ${cls}` : ""}`;
    return box;
  }
  return h("div", { class: `rl-text${cls ? ` ${cls}` : ""}` }, s);
}
