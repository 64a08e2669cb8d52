/**
 * The journal rules of a report on an open call that server and worker share: a host's frames and
 * an HTTP tool's callbacks (server/src/hosts/call-reports.ts) and a worker's components and HTTP
 * Environments (worker/src/call-reporter.ts) write exactly these records. How the refusal reaches
 * the tool (a thrown BrainError, a host reply) stays with each of them.
 */
import { errorOutcome } from "@aexhq/brain-contracts";
import {
  type CallAction,
  type CallRef,
  endCalls,
  refuseEmission,
  type TransitionResult,
  transitionCall,
} from "@aexhq/brain-db/ops";
import type { JournalWriter, PendingRepairs } from "@aexhq/brain-db/writer";

/**
 * The emission budget refuses a report. The refusal is journaled (see refuseEmission). An
 * extension event is only refused: the tool may go on. A result-bearing report is the call's
 * answer, and it cannot be recorded: the call ends at once with a `budget_exceeded` error outcome
 * in its place, written whatever the budget says (Brain's own small error), so that nothing waits
 * for a deadline that may never come. `ended` is that end's transition (null for an event).
 */
export async function journalBudgetRefusal(
  writer: JournalWriter,
  ref: CallRef,
  action: CallAction,
  bytes: number,
): Promise<{ message: string; ended: TransitionResult | null }> {
  const kind = action.type === "emit" ? action.kind : "tool_result";
  await writer.submit(refuseEmission(ref.sessionId, ref.seq, kind, bytes));
  const message = `The ${kind} emission of ${bytes} bytes would exceed the activation's BRAIN_MAX_EMITTED_BYTES budget.`;
  if (action.type === "emit") return { message, ended: null };
  const outcome = errorOutcome("budget_exceeded", message, { bytes });
  return { message, ended: await writer.submit(transitionCall(ref, { type: action.type, outcome })) };
}

/**
 * A result-bearing report whose answer cannot be stored: the call ends with an `invalid_output`
 * error outcome in its place (Brain's own small error, written whatever the budget says) instead
 * of staying open until its deadline.
 */
export function endWithInvalidOutput(
  writer: JournalWriter,
  ref: CallRef,
  type: Exclude<CallAction["type"], "emit">,
  message: string,
): Promise<TransitionResult> {
  return writer.submit(transitionCall(ref, { type, outcome: errorOutcome("invalid_output", message) }));
}

/**
 * The tool has finished, but the database could not take its word for it, and the reporter never
 * sends the report again: the call ends `unknown` (cause `journal_unavailable`) as soon as the
 * database answers, rather than staying open with nothing left to end it.
 */
export function endUnknownWhenBack(writer: JournalWriter, repairs: PendingRepairs, ref: CallRef): void {
  const end = endCalls(
    { sessionId: ref.sessionId, seqs: [ref.seq] },
    { status: "unknown", cause: "journal_unavailable" },
  );
  repairs.add(`call:${ref.sessionId}:${ref.seq}`, () => writer.submit(end));
}
