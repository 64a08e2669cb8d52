/**
 * Outcomes a component hands over as JSON strings, checked the way the server and the SDK check
 * a host's: a malformed envelope becomes `invalid_output`, an error outcome, so it ends the call.
 * A result's size is bounded only by the activation's emission budget.
 */
import {
  ERROR_CODES,
  type ErrorCode,
  errorOutcome,
  findUnstorable,
  issuesText,
  type Outcome,
  OutcomeSchema,
  UNSTORABLE_TEXT,
} from "@aexhq/brain-contracts";

/** An error string for the component: the stable code first (`call_ended: ...`). */
export function codeMessage(code: ErrorCode, message?: string): string {
  return `${code}: ${message ?? ERROR_CODES[code].message}`;
}

export type Checked = { ok: true; outcome: Outcome } | { ok: false; code: ErrorCode; outcome: Outcome };

/** Parses and validates an Outcome JSON string. */
export function parseOutcome(text: string): Checked {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = `the outcome is not JSON: ${(error as Error).message}`;
    return { ok: false, code: "invalid_output", outcome: errorOutcome("invalid_output", message) };
  }
  const parsed = OutcomeSchema.safeParse(value);
  if (!parsed.success) {
    const issues = issuesText(parsed.error, { root: "outcome" });
    return {
      ok: false,
      code: "invalid_output",
      outcome: errorOutcome("invalid_output", `malformed outcome envelope: ${issues}`.slice(0, 8192)),
    };
  }
  return { ok: true, outcome: parsed.data };
}

/**
 * The outcome, or an `invalid_output` error in its place when it holds text Postgres cannot store:
 * the call ends with it at once (as a host's would on the server), and the component is told
 * `unstorable_text`.
 */
export function storableOutcome(checked: Checked): Checked {
  const where = checked.ok ? findUnstorable(checked.outcome, "$.outcome") : null;
  if (where === null) return checked;
  const message = `The tool's output contains ${UNSTORABLE_TEXT} at ${where}, which cannot be stored.`;
  return { ok: false, code: "unstorable_text", outcome: errorOutcome("invalid_output", message) };
}

/**
 * A trap or exception in `run`, as the error outcome that ends the call. `run` returns nothing in
 * the WIT, so a JavaScript component (componentize-js) cannot hand its exception over: it prints
 * the exception's message to stderr, then `Stack:` and the stack, and traps with `unreachable`.
 * The outcome's message is the component's own when stderr shows it; the trap is kept in details.
 */
export function trapOutcome(message: string, details: Record<string, unknown> & { stderr?: string[] }): Outcome {
  // Only an `unreachable` trap is componentize-js reporting an exception; another trap is the trap.
  const own = /unreachable/.test(message) ? thrownMessage(details.stderr ?? []) : null;
  const text = own === null ? message : own;
  const withTrap = own === null ? details : { ...details, trap: message.slice(0, 1024) };
  return errorOutcome("component_trap", text.slice(0, 8192) || "the component trapped", withTrap);
}

/** A component out of memory: its linear memory at its cap, or its thread's heap at its limit. */
export function memoryExceeded(message: string): Outcome {
  return errorOutcome("memory_exceeded", `The component ran out of memory: ${message}`.slice(0, 8192));
}

/** The line a componentize-js component printed just before `Stack:`, or null. */
function thrownMessage(stderr: string[]): string | null {
  const at = stderr.lastIndexOf("Stack:");
  const line = at > 0 ? stderr[at - 1]!.trim() : "";
  return line === "" ? null : line;
}
