/**
 * Header values are secrets, but a service may echo them back (a debugging endpoint, an error that
 * quotes the request). Whatever an Environment answers is scrubbed of them before it can reach the
 * journal, a tool or a model: each value, and each long word of it (the token of "Bearer <token>").
 */

/** Shorter pieces are left alone: they are not credentials, and replacing them would mangle data. */
const MIN_SECRET_CHARS = 8;
export const REDACTED = "[redacted]";

/** The strings to scrub for these headers, longest first (so a whole value goes before its parts). */
export function secretsOf(headers: Record<string, string>): string[] {
  const found = new Set<string>();
  for (const value of Object.values(headers)) {
    for (const piece of [value, ...value.split(/\s+/)]) {
      if (piece.length >= MIN_SECRET_CHARS) found.add(piece);
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/** `value` with every occurrence of a secret in its strings (object keys included) replaced. */
export function redact<T>(value: T, secrets: string[]): T {
  if (secrets.length === 0) return value;
  return scrub(value, secrets) as T;
}

function scrub(value: unknown, secrets: string[]): unknown {
  if (typeof value === "string") return scrubText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => scrub(v, secrets));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrubText(k, secrets), scrub(v, secrets)]));
  }
  return value;
}

function scrubText(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
