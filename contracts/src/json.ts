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

export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
