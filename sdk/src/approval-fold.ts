import { type JournalEvent, type PendingApproval, payloadOf, type RecordPayload } from "./contracts.js";

type Started = { payload: RecordPayload<"tool_call_started">; at: string };

/**
 * The calls of a session waiting at an approval gate, kept current one journal record at a time:
 * a call joins when it starts at an `always` gate or when its tool's predicate holds it
 * (approval_checked, required), and leaves at its decision or its end.
 */
export class ApprovalFold {
  readonly waiting = new Map<number, PendingApproval>();
  /** Open calls' tool_call_started, for a predicate that holds one later. */
  private readonly open = new Map<number, Started>();

  /** Folds one record; answers the call that just started waiting, if this record is one. */
  note(event: JournalEvent): PendingApproval | null {
    const started = payloadOf(event, "tool_call_started");
    if (started) {
      if (started.approval)
        return this.wait(event.sequence, { payload: started, at: event.createdAt }, started.approval.inputHash);
      this.open.set(event.sequence, { payload: started, at: event.createdAt });
      return null;
    }
    const checked = payloadOf(event, "approval_checked");
    if (checked?.required && checked.inputHash !== undefined) {
      const call = this.open.get(checked.call);
      return call ? this.wait(checked.call, { ...call, at: event.createdAt }, checked.inputHash) : null;
    }
    const decided = payloadOf(event, "approval_decided")?.call;
    if (decided !== undefined) this.waiting.delete(decided);
    const ended = payloadOf(event, "tool_call_ended")?.call;
    if (ended !== undefined) {
      this.waiting.delete(ended);
      this.open.delete(ended);
    }
    return null;
  }

  private wait(call: number, started: Started, inputHash: string): PendingApproval {
    const { payload } = started;
    const approval: PendingApproval = {
      call,
      tool: payload.tool,
      callId: payload.callId,
      input: (payload.input ?? null) as PendingApproval["input"],
      inputHash,
      deadline: payload.deadline,
      requestedAt: started.at,
    };
    this.waiting.set(call, approval);
    this.open.set(call, started);
    return approval;
  }
}
