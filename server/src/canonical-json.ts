/**
 * A value as canonical JSON: object keys sorted at every level, so the same value reads the same
 * whatever order its keys came in (a request body, or a payload back from jsonb, which keeps its
 * own order). What request hashes (Idempotency-Key) and approval input hashes are taken of.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
