import { BrainError, EVENT_KIND_PATTERN, isReservedKind, type Outcome } from "@aexhq/brain-contracts";
import { appendRecords, type CallAction, type CallRef, type TransitionResult, transitionCall } from "@aexhq/brain-db";
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
  rt: Pick<Runtime, "writer" | "config">,
  ref: CallRef,
  action: CallAction,
): Promise<TransitionResult> {
  const result = await rt.writer.submit(transitionCall(ref, action, rt.config.maxEmittedBytes));
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
