/**
 * Outcomes a component hands over as JSON strings, checked the way the server and the SDK check
 * a host's: a malformed envelope becomes `invalid_output`, and a result larger than one host frame
 * may be (MAX_FRAME_BYTES) becomes `result_too_large`. Both are error outcomes, so they end the call.
 */
import {
  byteLength,
  ERROR_CODES,
  type ErrorCode,
  errorOutcome,
  findUnstorable,
  MAX_FRAME_BYTES,
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
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "outcome"}: ${i.message}`).join("; ");
    return {
      ok: false,
      code: "invalid_output",
      outcome: errorOutcome("invalid_output", `malformed outcome envelope: ${issues}`.slice(0, 8192)),
    };
  }
  return { ok: true, outcome: parsed.data };
}

/**
 * The size of the host frame that would carry this outcome for the call: the bound the SDK
 * applies before sending, so a component's result is refused exactly where a host's would be.
 */
export function resultFrameBytes(
  type: "result" | "finish",
  call: { sessionId: string; seq: number },
  outcome: Outcome,
): number {
  return byteLength(JSON.stringify({ type, sessionId: call.sessionId, sequence: call.seq, outcome, id: 0 }));
}

/** The outcome, or `result_too_large` in its place when its frame would be over the limit. */
export function boundOutcome(
  type: "result" | "finish",
  call: { sessionId: string; seq: number },
  outcome: Outcome,
): Checked {
  const bytes = resultFrameBytes(type, call, outcome);
  if (bytes <= MAX_FRAME_BYTES) return { ok: true, outcome };
  const message = `The ${type} frame is ${bytes} bytes; the limit is ${MAX_FRAME_BYTES}.`;
  return {
    ok: false,
    code: "result_too_large",
    outcome: errorOutcome("result_too_large", message, { bytes, limit: MAX_FRAME_BYTES }),
  };
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

/** A trap or exception in `run`, as the error outcome that ends the call. */
export function trapOutcome(message: string, details: Record<string, unknown>): Outcome {
  return errorOutcome("component_trap", message.slice(0, 8192) || "the component trapped", details);
}
