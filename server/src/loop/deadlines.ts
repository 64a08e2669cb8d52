import { MAX_TIMER_MS } from "@aexhq/brain-contracts";
import { endCalls } from "@aexhq/brain-db";
import type { Services } from "../services.js";
import type { LoopState } from "./state.js";

/**
 * In-process deadline timers for a session's open calls: the precise path. (The durable backstop
 * is a pg-boss job per deadline second, see deadline-jobs.ts.) Node timers overflow past
 * 2^31-1 ms, so long deadlines are re-armed in steps instead of firing at once.
 */
export class DeadlineTimers {
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(
    private readonly rt: Pick<Services, "log" | "writer">,
    private readonly sessionId: string,
  ) {}

  /** Arms timers for open calls with a deadline and drops those of calls that ended. */
  sync(state: LoopState): void {
    for (const [seq, t] of this.timers) {
      if (!state.open.has(seq)) {
        clearTimeout(t);
        this.timers.delete(seq);
      }
    }
    for (const seq of state.open) {
      const deadline = state.calls.get(seq)?.deadline;
      if (deadline != null && !this.timers.has(seq)) this.arm(seq, deadline);
    }
  }

  private arm(seq: number, deadline: number): void {
    const delay = deadline - Date.now();
    if (delay > MAX_TIMER_MS) {
      this.timers.set(
        seq,
        setTimeout(() => this.arm(seq, deadline), MAX_TIMER_MS),
      );
      return;
    }
    this.timers.set(
      seq,
      setTimeout(() => void this.expire(seq), Math.max(0, delay)),
    );
  }

  private async expire(seq: number): Promise<void> {
    this.timers.delete(seq);
    try {
      await this.rt.writer.submit(
        endCalls({ sessionId: this.sessionId, seqs: [seq] }, { status: "timeout", cause: "deadline" }),
      );
    } catch (err) {
      this.rt.log.warn({ err, sessionId: this.sessionId, seq }, "deadline write failed; the backstop job will retry");
    }
  }

  clear(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
