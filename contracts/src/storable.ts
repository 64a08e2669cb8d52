/**
 * Text Postgres can store. `text` columns refuse NUL characters, and `jsonb` refuses the `\u0000`
 * escape and unpaired UTF-16 surrogates (JSON.stringify writes them as `\ud800`): either fails the
 * whole write with a data exception. Checking first lets a caller answer with a clear code, and
 * keeps such values away from the database entirely.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what it looks for.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Paths are quoted into error messages: long ones are cut. */
const MAX_PATH_CHARS = 200;

export const UNSTORABLE_TEXT = "a NUL character or an unpaired UTF-16 surrogate";

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** `text` with each unstorable character replaced by U+FFFD, for text Brain writes itself. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE_ALL, "\ufffd");
}

/**
 * The path of the first string (or object key) in a JSON value that Postgres cannot store, or
 * null. Iterative: a hostile value may nest deeper than the call stack. The path names keys as
 * JSON strings when they are not identifiers, so it is itself always storable. Nearly every value
 * is storable: it is looked through once without naming anything, and walked again to build the
 * path only when something was found (every frame and model answer passes here).
 */
export function findUnstorable(value: unknown, root = "$"): string | null {
  return allStorable(value) ? null : pathOfUnstorable(value, root);
}

function allStorable(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (UNSTORABLE.test(v)) return false;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (v !== null && typeof v === "object") {
      const object = v as Record<string, unknown>;
      for (const key of Object.keys(object)) {
        if (UNSTORABLE.test(key)) return false;
        stack.push(object[key]);
      }
    }
  }
  return true;
}

function pathOfUnstorable(value: unknown, root: string): string | null {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (!isStorableText(v)) return shortPath(path);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const at = IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
        if (!isStorableText(key)) return shortPath(at);
        stack.push([child, at]);
      }
    }
  }
  return null;
}

/** A copy of a JSON value whose strings and keys are all storable (for outcomes Brain writes). */
export function toStorable<T>(value: T): T {
  if (findUnstorable(value) === null) return value;
  return JSON.parse(JSON.stringify(value), (_key, v: unknown) => {
    if (typeof v === "string") return storableText(v);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v).map(([k, c]) => [storableText(k), c]));
    }
    return v;
  }) as T;
}

function shortPath(path: string): string {
  return path.length <= MAX_PATH_CHARS ? path : `${path.slice(0, MAX_PATH_CHARS)}…`;
}
