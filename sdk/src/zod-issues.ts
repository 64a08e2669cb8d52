import type { z } from "zod";

/** One zod issue as it travels in an error outcome's `details` (plain JSON, bounded). */
export interface WireIssue {
  code: string;
  path: (string | number)[];
  message: string;
}

// Error outcomes stay small: an unbounded issue list would spend the activation's emission
// budget and could turn a useful `invalid_input` into an opaque `budget_exceeded`.
const MAX_ISSUES = 20;
const MAX_MESSAGE = 500;

export function issuesForWire(error: z.ZodError): WireIssue[] {
  return error.issues.slice(0, MAX_ISSUES).map((issue) => ({
    code: issue.code,
    path: issue.path.map((key) => (typeof key === "number" ? key : String(key))),
    message: issue.message.slice(0, MAX_MESSAGE),
  }));
}

/** The message of anything thrown, for error outcomes (bounded by ToolErrorSchema's 8192). */
export function thrownMessage(thrown: unknown): string {
  const text = thrown instanceof Error ? thrown.message : String(thrown);
  return text.slice(0, 8192);
}
