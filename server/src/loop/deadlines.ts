import { armAt } from "@aexhq/brain-contracts";
import { timeOutCall } from "@aexhq/brain-db/ops";
import type { Services } from "../services.js";
import type { LoopState } from "./state.js";

/**
 * In-process deadline timers for a session's open calls: the precise path. (The durable backstop
 * is a pg-boss job per deadline second, see deadline-jobs.ts.) armAt re-arms far deadlines in
 * steps, past what one Node timer holds.
 */
export class DeadlineTimers {
  /** The disarm of each armed call's timer. */
  private readonly timers = new Map<number, () => void>();

  constructor(
    private readonly rt: Pick<Services, "log" | "writer">,
    private readonly sessionId: string,
  ) {}

  /** Arms timers for open calls with a deadline and drops those of calls that ended. */
  sync(state: LoopState): void {
    for (const [seq, disarm] of this.timers) {
      if (!state.open.has(seq)) {
        disarm();
        this.timers.delete(seq);
      }
    }
    for (const seq of state.open) {
      const deadline = state.calls.get(seq)?.deadline;
      if (deadline != null && !this.timers.has(seq)) this.arm(seq, deadline);
    }
  }

  private arm(seq: number, deadline: number): void {
    // armAt fires at once for a deadline already past: the expiry waits a microtask, so that the
    // entry it deletes is in the map by then (a failed write is retried by the next sync).
    this.timers.set(
      seq,
      armAt(deadline, () => queueMicrotask(() => void this.expire(seq))),
    );
  }

  private async expire(seq: number): Promise<void> {
    this.timers.delete(seq);
    try {
      await this.rt.writer.submit(timeOutCall(this.sessionId, seq));
    } catch (err) {
      this.rt.log.warn({ err, sessionId: this.sessionId, seq }, "deadline write failed; the backstop job will retry");
    }
  }

  clear(): void {
    for (const disarm of this.timers.values()) disarm();
    this.timers.clear();
  }
}
