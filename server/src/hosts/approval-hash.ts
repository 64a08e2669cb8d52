import { createHash } from "node:crypto";

/**
 * The hash an approval binds: SHA-256 (hex) of the call's input as canonical JSON (object keys
 * sorted at every level), so it reads the same from the journal, where jsonb keeps its own order.
 */
export function inputHash(input: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(input)))
    .digest("hex");
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, canonical(v)]));
  }
  return value;
}
