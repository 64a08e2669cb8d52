import { z } from "zod";

/**
 * Whether a value is plain JSON: the journal stores exactly what JSON.stringify would write, so
 * values that JSON would silently change (undefined, NaN, Infinity, BigInt, Dates, class instances,
 * functions, symbols) are refused instead. Returns a path to the first offending value, or null.
 */
export function findNonJson(value: unknown, path = "$", seen = new Set<object>()): string | null {
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : path;
    case "object": {
      if (value === null) return null;
      if (seen.has(value)) return `${path} (cycle)`;
      seen.add(value);
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            if (!(i in value)) return `${path}[${i}]`;
            const bad = findNonJson(value[i], `${path}[${i}]`, seen);
            if (bad) return bad;
          }
          return null;
        }
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) return path;
        if (Object.getOwnPropertySymbols(value).length > 0) return path;
        for (const [key, child] of Object.entries(value)) {
          const bad = findNonJson(child, `${path}.${key}`, seen);
          if (bad) return bad;
        }
        return null;
      } finally {
        seen.delete(value);
      }
    }
    default:
      return path;
  }
}

/**
 * The deepest nesting a JSON value from outside may have: far past any data, and within what
 * every recursive reader of the journal (JSON.stringify, Postgres's jsonb) can take.
 */
export const MAX_JSON_DEPTH = 512;

/** Whether a value's objects and arrays nest at most `max` levels deep. Iterative: no stack. */
export function withinJsonDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth >= max) return false;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return true;
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** A JSON value from outside: any JSON, nested at most MAX_JSON_DEPTH levels deep. */
export const JsonFieldSchema = z
  .json()
  .refine((value) => withinJsonDepth(value), `nested at most ${MAX_JSON_DEPTH} levels deep`);
