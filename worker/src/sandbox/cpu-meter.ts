/**
 * The CPU bound of one component call: polls the thread's CPU time (cpu.ts) from the moment the
 * call is handed to it, and says when it passes the bound. Without a per-thread reading, the time
 * the thread spent not waiting on a host call stands in for it.
 */
import { threadCpuMs } from "./cpu.js";

const POLL_MS = 250;

export class CpuMeter {
  private timer: NodeJS.Timeout | undefined;
  private tid: number | null = null;
  private base = 0;
  /** Without /proc: when the call started, and how long it has waited on host calls. */
  private readonly startedAt = performance.now();
  private waitedMs = 0;
  private waitingSince: number | null = null;

  constructor(
    private readonly limitMs: number,
    private readonly onExceeded: (usedMs: number) => void,
  ) {}

  /** The thread said who it is: measuring begins. */
  start(tid: number | null): void {
    if (this.limitMs <= 0 || this.timer) return;
    this.tid = tid;
    this.base = tid === null ? 0 : (threadCpuMs(tid) ?? 0);
    this.timer = setInterval(() => this.check(), POLL_MS);
    this.timer.unref();
  }

  /** The thread is blocked on a host call (true) or running again (false). */
  waiting(blocked: boolean): void {
    const now = performance.now();
    if (blocked) this.waitingSince = now;
    else if (this.waitingSince !== null) {
      this.waitedMs += now - this.waitingSince;
      this.waitingSince = null;
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** CPU time used since the call began. */
  used(): number {
    if (this.tid !== null) {
      const now = threadCpuMs(this.tid);
      if (now !== null) return now - this.base;
    }
    const waiting = this.waitingSince === null ? 0 : performance.now() - this.waitingSince;
    return performance.now() - this.startedAt - this.waitedMs - waiting;
  }

  private check(): void {
    const used = this.used();
    if (used <= this.limitMs) return;
    this.stop();
    this.onExceeded(Math.round(used));
  }
}
