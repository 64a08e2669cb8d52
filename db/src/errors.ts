/**
 * Whether a failed write was a Postgres data exception (SQLSTATE class 22: a NUL character, an
 * invalid Unicode escape, a value out of range). Such a write failed on its input alone, wrote
 * nothing, and retrying it cannot help: callers answer it as the input's fault, never as a crash.
 */
export function isDataException(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  // `severity` tells a server error apart from a driver or Node error that reuses `code`.
  return typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code) && typeof severity === "string";
}
