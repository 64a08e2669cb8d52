import type { z } from "zod";

/**
 * A schema failure as text, for error messages: `path: message` per issue, joined. An issue at the
 * root has an empty path; `root` names it instead (a configuration's, a descriptor's, …).
 */
export function issuesText(
  error: z.ZodError,
  options: { root?: string; prefix?: string; separator?: string } = {},
): string {
  const { root = "", prefix = "", separator = "; " } = options;
  return error.issues.map((i) => `${prefix}${i.path.join(".") || root}: ${i.message}`).join(separator);
}

/** One issue as the HTTP API's `invalid_request` details carry it: the path joined with dots. */
export function issueDetail(i: { path: PropertyKey[]; message: string; code: string }): {
  path: string;
  message: string;
  code: string;
} {
  return { path: i.path.map(String).join("."), message: i.message, code: i.code };
}

/** One zod issue as it travels in an error outcome's `details` (plain JSON, bounded). */
export interface WireIssue {
  code: string;
  path: (string | number)[];
  message: string;
}

// Error outcomes stay small: an unbounded issue list would spend the activation's emission
// budget and could turn a useful `invalid_input` into an opaque `budget_exceeded`.
const MAX_WIRE_ISSUES = 20;
const MAX_WIRE_MESSAGE = 500;

/**
 * A schema failure as a tool's error outcome carries it (`invalid_input`, `invalid_output`): the
 * path kept as an array (a key may hold a dot), at most 20 issues of at most 500 characters.
 */
export function issuesForWire(error: z.ZodError): WireIssue[] {
  return error.issues.slice(0, MAX_WIRE_ISSUES).map((issue) => ({
    code: issue.code,
    path: issue.path.map((key) => (typeof key === "number" ? key : String(key))),
    message: issue.message.slice(0, MAX_WIRE_MESSAGE),
  }));
}
