/**
 * The calls this worker is running, so they can be stopped from outside their own flow: at their
 * deadline, when the call ended elsewhere (the user cancelled it, a server's timer or the session's
 * end got there first), or when the worker shuts down. Stopping terminates the thread wherever it
 * is; nothing the component does afterwards can reach the journal, since every write is
 * conditional on the call being open.
 */
import type { Sql } from "@aexhq/brain-db/connect";
import { endedAmong } from "@aexhq/brain-db/ops";
import type { RunningThread } from "./thread-runner.js";

export type StopReason = "deadline" | "ended" | "shutdown" | "lost";

export class RunningCall {
  private thread: RunningThread | null = null;
  private reason: StopReason | null = null;
  private readonly controller = new AbortController();
  /**
   * Whether the call's end is (or may be) its own report's: then the grace after its end stops it
   * (see invocation.ts), not the database's end seen by stopEnded. Set by the invocation.
   */
  endsOnItsOwn: () => boolean = () => false;

  constructor(
    readonly sessionId: string,
    readonly seq: number,
  ) {}

  get key(): string {
    return `${this.sessionId}:${this.seq}`;
  }

  /** Why it was stopped, or null while it runs. */
  get stopped(): StopReason | null {
    return this.reason;
  }

  /** Aborted when the call is stopped: drivers that make requests (HTTP) stop them with it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  attach(thread: RunningThread): void {
    this.thread = thread;
    if (this.reason) void thread.terminate();
  }

  stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    void this.thread?.terminate();
    this.controller.abort(new Error(`the call was stopped: ${reason}`));
  }
}

export class RunningCalls {
  private readonly calls = new Map<string, RunningCall>();

  add(sessionId: string, seq: number): RunningCall {
    const call = new RunningCall(sessionId, seq);
    this.calls.set(call.key, call);
    return call;
  }

  remove(call: RunningCall): void {
    if (this.calls.get(call.key) === call) this.calls.delete(call.key);
  }

  get size(): number {
    return this.calls.size;
  }

  all(): RunningCall[] {
    return [...this.calls.values()];
  }

  /**
   * Stops the calls that have ended in the database. `sessions` narrows the check to the sessions a
   * commit touched; without it every running call is checked (after a LISTEN reconnect, and each
   * second as the backstop for lost notifications).
   */
  async stopEnded(sql: Sql, sessions?: readonly string[]): Promise<void> {
    const wanted = sessions ? new Set(sessions) : null;
    const candidates = this.all().filter(
      (c) => !c.stopped && !c.endsOnItsOwn() && (!wanted || wanted.has(c.sessionId)),
    );
    if (candidates.length === 0) return;
    for (const ended of await endedAmong(sql, candidates)) {
      const call = this.calls.get(`${ended.sessionId}:${ended.seq}`);
      // Its own write may have ended it while the query ran: that write's end decides.
      if (call && !call.endsOnItsOwn()) call.stop("ended");
    }
  }

  stopAll(reason: StopReason): void {
    for (const call of this.calls.values()) call.stop(reason);
  }
}
