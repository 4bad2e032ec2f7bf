// DOM helpers. Model output is untrusted: text only ever enters the page as text nodes or
// through `textContent`/`value`; URLs go through `safeUrl`. There is no HTML-string path here.
// The stylesheet (styles.css) is not imported: it ships as static/views.css in anywidget's `_css`.

const URL_ATTRS = new Set(["src", "href"]);
const PROP_KEYS = new Set(["value", "checked", "disabled", "selected", "title", "placeholder", "type", "min", "max", "step", "open", "tabIndex", "readOnly"]);

/**
 * Only http(s) URLs and data: URIs of raster images may become a `src`/`href`.
 * @param {unknown} url
 * @returns {string | null}
 */
export function safeUrl(url) {
  if (typeof url !== "string") return null;
  const s = url.trim();
  if (/^data:image\/(png|jpe?g|gif|webp|bmp|avif);base64,[a-z0-9+/=\s]+$/i.test(s)) return s;
  if (/^https?:\/\/[^\s"'<>]+$/i.test(s)) return s;
  return null;
}

/**
 * Create an element. Strings and numbers among `children` become text nodes.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any> | null} [props]
 * @param {...any} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value == null || value === false) continue;
    if (key === "class") el.className = String(value);
    else if (key === "style") el.style.cssText = String(value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (URL_ATTRS.has(key)) {
      const url = safeUrl(value);
      if (url) el.setAttribute(key, url);
    } else if (PROP_KEYS.has(key)) /** @type {any} */ (el)[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/**
 * @param {Node} el
 * @param {any[]} children
 */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** @param {Node} el */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/**
 * The root of a view: its scoped class (`.rl` rules come from the `_css` stylesheet).
 * @param {HTMLElement} host
 * @param {string} kind
 */
export function mountRoot(host, kind) {
  clear(host);
  const root = h("div", { class: `rl rl-${kind}` });
  host.append(root);
  return root;
}

/** @param {boolean} isMock @param {string} [judge] */
export function mockBanner(isMock, judge) {
  if (!isMock) return null;
  const details = `These results come from rubriclab's offline mock judge${judge ? ` (${judge})` : ""}: deterministic stand-in answers for trying the workflow, not a real model's judgments.`;
  return h("div", { class: "rl-mock", role: "note", title: details }, h("b", {}, "⚠ MOCK judge"), h("span", { class: "rl-mock-more" }, " · not a real model (hover for details)"));
}

/**
 * A text block (pre-wrap), e.g. a prompt or a response.
 * @param {string} name
 * @param {unknown} text
 */
export function field(name, text) {
  return h("div", { class: "rl-field" }, h("div", { class: "rl-field-name" }, name), h("div", { class: "rl-text" }, text == null ? "" : String(text)));
}

/**
 * Subscribe to several trait changes; returns the unsubscribe function (view cleanup).
 * @param {any} model
 * @param {string[]} traits
 * @param {() => void} callback
 */
export function listen(model, traits, callback) {
  for (const t of traits) model.on(`change:${t}`, callback);
  return () => {
    for (const t of traits) model.off(`change:${t}`, callback);
  };
}
