import { BrainError, EVENT_KIND_PATTERN, isReservedKind, type Outcome } from "@aexhq/brain-contracts";
import {
  appendRecords,
  type CallAction,
  type CallRef,
  endCalls,
  isUnavailable,
  type TransitionResult,
  transitionCall,
} from "@aexhq/brain-db";
import type { Runtime } from "../runtime.js";

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
 * call is open for `ref`), and, when the activation's emission budget refuses it, the
 * `emission_rejected` record and `budget_exceeded`. A result with `seq` null means the call was not
 * open for this reporter; the caller says why.
 */
export async function applyReport(
  rt: Pick<Runtime, "writer" | "config" | "repairs">,
  ref: CallRef,
  action: CallAction,
): Promise<TransitionResult> {
  const result = await rt.writer.submit(transitionCall(ref, action, rt.config.maxEmittedBytes)).catch((err) => {
    // The tool has finished, but the database could not take its word for it, and the reporter
    // never sends the frame again: the call ends `unknown` as soon as the database answers,
    // rather than staying open with nothing left to end it.
    if (isUnavailable(err) && endsCall(action)) {
      const end = endCalls(
        { sessionId: ref.sessionId, seqs: [ref.seq] },
        { status: "unknown", cause: "journal_unavailable" },
      );
      rt.repairs.add(`call:${ref.sessionId}:${ref.seq}`, () => rt.writer.submit(end));
    }
    throw err;
  });
  if (result.overBudget) {
    const kind = action.type === "emit" ? action.kind : "tool_result";
    await rt.writer.submit(
      appendRecords(ref.sessionId, [
        {
          kind: "emission_rejected",
          payload: { call: ref.seq, kind, bytes: result.bytes, code: "budget_exceeded" },
        },
      ]),
    );
    throw new BrainError("budget_exceeded");
  }
  return result;
}

/** Whether the report, once journaled, would end the call: a finish, or any non-success outcome. */
function endsCall(action: CallAction): boolean {
  if (action.type === "emit") return false;
  return action.type === "finish" || (action.outcome !== undefined && action.outcome.status !== "ok");
}
