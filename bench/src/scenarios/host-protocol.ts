/** What the runner asks of the host application process (host.ts), and what it answers. */

export type TurnKind = "text" | "tool" | "emit";

export interface InitArgs {
  url: string;
  token: string;
}

export interface PrepareArgs {
  kind: TurnKind;
  /** Measured turns to script after the warm-up. */
  turns: number;
  /** Turns run now, unmeasured, on the same session (JIT, connection pools, caches). */
  warmup: number;
  /** For `emit`: emits per tool call. */
  emits?: number;
  /**
   * Before the warm-up, grow the journal by about this many records: turns whose one tool call
   * emits extension events (at most FILL_PER_TURN per turn, in flight together), then answers.
   */
  prefill?: number;
}

/** Extension events one prefill turn emits at most (well inside the activation's emission budget). */
export const FILL_PER_TURN = 2_000;

export interface PrepareResult {
  sessionId: string;
}

/** One measured turn: `session.send()` called and resolved, on the wall clock (epoch ms, µs resolution). */
export interface Turn {
  start: number;
  end: number;
}

export interface MeasureResult {
  sessionId: string;
  turns: Turn[];
  /** Handler entries of this run's tool calls: the journal sequence of tool_call_started, and when. */
  handlers: { seq: number; enteredAt: number }[];
  /** When each invoke frame of this run reached the host's socket (before the SDK parsed it). */
  invokes: { seq: number; at: number }[];
  /** `await ctx.emit` round trips, ms. */
  emitMs: number[];
  /** Turns whose answer was not the scripted text. */
  anomalies: string[];
}

export interface ThroughputArgs {
  sessions: number;
  warmupMs: number;
  durationMs: number;
  /** Turns scripted per session; a session that runs out stops (reported as exhausted). */
  maxTurns: number;
}

export interface ThroughputResult {
  /** Tool calls whose finish was acknowledged (committed) inside the measured window. */
  calls: number;
  /** Turns that ended inside the window. */
  turns: number;
  windowSeconds: number;
  /** Latency of the turns that started and ended inside the window. */
  turnMs: number[];
  exhausted: number;
  anomalies: string[];
}

export interface IdleArgs {
  count: number;
  concurrency: number;
  /** Turns each session is given after its creation (default 1). */
  turns?: number;
  /** What each turn is (default "text"): "tool" is a bench_echo call, then the text answer. */
  kind?: "text" | "tool";
}

export interface IdleResult {
  created: number;
  seconds: number;
  /** Turns whose answer was not the scripted text. */
  anomalies: string[];
}

export interface AlternateArgs {
  /** Sessions returned by `prepare`, each scripted for at least `turns` more text turns. */
  sessionIds: string[];
  turns: number;
}

export interface AlternateResult {
  /** Turn latencies, ms, by session id. */
  turnMs: Record<string, number[]>;
  anomalies: string[];
}
