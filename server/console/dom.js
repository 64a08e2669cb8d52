// Building the page without ever parsing markup. Journal text is hostile (a model's answer, a
// tool's input, an extension event's data): it goes into the page only as text nodes and as
// attribute values set one by one, never through innerHTML.

/**
 * An element: `props` are attributes (`class`, `dataset`, `on<event>` listeners, anything else
 * set with setAttribute), `children` are nodes or values shown as text.
 * @param {string} tag
 * @param {Record<string, unknown>} [props]
 * @param {...unknown} children
 * @returns {HTMLElement}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = String(value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function")
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (key === "href") el.setAttribute("href", internalHref(String(value)));
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** @param {Node} parent @param {unknown[]} children */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content with `children`. @param {Node} parent @param {...unknown} children */
export function replace(parent, ...children) {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/** Links stay inside the console: anything else (a `javascript:` URL, say) becomes "#". */
function internalHref(href) {
  return href.startsWith("#/") ? href : "#";
}

/** @param {string} iso @returns {string} local date and time, to the millisecond */
export function dateTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(iso)}`;
}

/** @param {string} iso @returns {string} local time of day, to the millisecond */
export function clock(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** @param {number | null | undefined} ms @returns {string} */
export function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Milliseconds between two ISO instants, or null. */
export function between(fromIso, toIso) {
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  return Number.isFinite(ms) ? ms : null;
}

/** A JSON value as one line, cut at `max` characters. */
export function brief(value, max = 160) {
  let text;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (text === undefined) return "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A JSON value, indented, for a record's details. */
export function pretty(value) {
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return String(value);
  }
}

/** The first 8 characters of an id, with the whole id as its title. */
export function shortId(id) {
  return h("span", { class: "id", title: id }, String(id).slice(0, 8));
}

/** A status word, coloured by class. */
export function badge(text, kind = text) {
  return h("span", { class: `badge badge-${String(kind).replace(/[^a-z0-9_-]/gi, "")}` }, text);
}
