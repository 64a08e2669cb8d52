import {
  BrainError,
  EVENT_KIND_PATTERN,
  errorOutcome,
  findUnstorable,
  hop,
  isReservedKind,
  type Outcome,
  UNSTORABLE_TEXT,
} from "@aexhq/brain-contracts";
import { endUnknownWhenBack, endWithInvalidOutput, journalBudgetRefusal } from "@aexhq/brain-core/calls";
import { isDataException } from "@aexhq/brain-db/connect";
import {
  type CallAction,
  type CallRef,
  endsCall,
  refuseEmission,
  type TransitionResult,
  transitionCall,
} from "@aexhq/brain-db/ops";
import { isUnavailable } from "@aexhq/brain-db/writer";
import type { Services } from "../services.js";

/**
 * What a tool reports about its open call, from a host's WebSocket frame or an HTTP tool's
 * callback: both get exactly these rules.
 */
export type CallReport =
  | { type: "emit"; kind: string; data: unknown }
  | { type: "result"; outcome: Outcome; content?: string | undefined }
  | { type: "return" | "finish"; outcome?: Outcome | undefined; content?: string | undefined };

/** The journal transition a report asks for; an emission of a disallowed kind is refused. */
export function toAction(report: CallReport): CallAction {
  switch (report.type) {
    case "emit":
      if (!EVENT_KIND_PATTERN.test(report.kind)) throw new BrainError("invalid_kind");
      if (isReservedKind(report.kind)) throw new BrainError("reserved_kind");
      return { type: "emit", kind: report.kind, data: report.data };
    case "result":
      return { type: "result", outcome: report.outcome, content: report.content };
    case "return":
      return { type: "return", outcome: report.outcome, content: report.content };
    case "finish":
      return { type: "finish", outcome: report.outcome, content: report.content };
  }
}

/**
 * Journals one report on an open call: the conditional transition (it writes nothing unless the
 * call is open for `ref`), and, when the activation's emission budget refuses it, the refusal
 * (see refuseEmission) and `budget_exceeded`. Text Postgres cannot store is refused with
 * `unstorable_text` (see refuseUnstorable). A result with `seq` null means the call was not open
 * for this reporter; the caller says why.
 */
export async function applyReport(
  rt: Pick<Services, "writer" | "config" | "repairs" | "metrics">,
  ref: CallRef,
  action: CallAction,
): Promise<TransitionResult> {
  const where = unstorableIn(action);
  if (where !== null) return refuseUnstorable(rt, ref, action, `at ${where}`);
  let result: TransitionResult;
  try {
    hop("server.report-submitted");
    result = await rt.writer.submit(transitionCall(ref, action, rt.config.maxEmittedBytes));
  } catch (error) {
    // The tool has finished, but the database could not take its word for it, and the reporter
    // never sends the frame again: the call ends `unknown` as soon as the database answers,
    // rather than staying open with nothing left to end it.
    if (isUnavailable(error) && endsCall(action)) endUnknownWhenBack(rt.writer, rt.repairs, ref);
    // The backstop: anything else Postgres refuses as data is the input's fault all the same.
    if (!isDataException(error)) throw error;
    return refuseUnstorable(rt, ref, action, `(${(error as Error).message})`);
  }
  if (result.overBudget) return refuseOverBudget(rt, ref, action, result.bytes);
  if (result.seq !== null) rt.metrics.emitted(action.type, result.bytes);
  return result;
}

/**
 * The emission budget refuses a report. The refusal is journaled (see refuseEmission). An
 * extension event is only refused: the tool may go on. A result-bearing report is the call's
 * answer, and it cannot be recorded: as with unstorable text, the call ends at once with a
 * `budget_exceeded` error outcome in its place, written whatever the budget says (Brain's own
 * small error), so that nothing waits for a deadline that may never come.
 */
export async function refuseOverBudget(
  rt: Pick<Services, "writer">,
  ref: CallRef,
  action: CallAction,
  bytes: number,
): Promise<never> {
  const { message } = await journalBudgetRefusal(rt.writer, ref, action, bytes);
  throw new BrainError("budget_exceeded", message, { bytes });
}

/**
 * A result-bearing frame whose parts passed anything the budget could admit (see PartCollector):
 * the call ends `budget_exceeded` at once, if it is open for this reporter, and the refusal is
 * journaled after its end. Without an open call, nothing is written (`call_ended`/`call_not_found`
 * are for the caller to tell).
 */
export async function refuseOversizeResult(
  rt: Pick<Services, "writer">,
  ref: CallRef,
  bytes: number,
): Promise<TransitionResult> {
  const message = `The result frame passed ${bytes} bytes, more than the activation's BRAIN_MAX_EMITTED_BYTES budget admits.`;
  const outcome = errorOutcome("budget_exceeded", message, { bytes });
  const ended = await rt.writer.submit(transitionCall(ref, { type: "finish", outcome }));
  if (ended.seq === null) return ended;
  await rt.writer.submit(refuseEmission(ref.sessionId, ref.seq, "tool_result", bytes));
  throw new BrainError("budget_exceeded", message, { bytes });
}

/** Where in a report's data the first unstorable string is, or null. */
export function unstorableIn(action: CallAction): string | null {
  if (action.type === "emit") return findUnstorable(action.data, "$.data");
  return findUnstorable(action.outcome ?? null, "$.outcome") ?? findUnstorable(action.content ?? null, "$.content");
}

/**
 * An extension event with unstorable text is only refused: the tool may go on. A result-bearing
 * report is the call's answer, and it cannot be recorded: the call ends at once with an
 * `invalid_output` error outcome in its place (instead of staying open until its deadline), then
 * the report is refused. The replacement is Brain's own small error, written whatever the budget
 * says, so the call does end.
 */
async function refuseUnstorable(
  rt: Pick<Services, "writer">,
  ref: CallRef,
  action: CallAction,
  where: string,
): Promise<never> {
  const message = `The ${action.type === "emit" ? "event data" : "tool's output"} contains ${UNSTORABLE_TEXT} ${where}, which cannot be stored.`;
  if (action.type !== "emit") await endWithInvalidOutput(rt.writer, ref, action.type, message);
  throw new BrainError("unstorable_text", message);
}
