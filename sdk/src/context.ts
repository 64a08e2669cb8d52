import { BrainError, type Outcome } from "@aexhq/brain-contracts";

/** Model-facing text that accompanies a result; it never replaces the structured output. */
export interface ResultOptions {
  content?: string;
}

/** Environment control operations (a later issue; every call rejects for now). */
export interface EnvironmentControl {
  list(...args: unknown[]): Promise<never>;
  get(...args: unknown[]): Promise<never>;
  create(...args: unknown[]): Promise<never>;
  update(...args: unknown[]): Promise<never>;
  setup(...args: unknown[]): Promise<never>;
  delete(...args: unknown[]): Promise<never>;
  call(...args: unknown[]): Promise<never>;
}

/**
 * The second argument of `run`. `Options` is the placement's parsed, frozen options; `Value` is
 * what the output schema accepts (or anything JSON when the tool has none).
 */
export interface ToolContext<Options = unknown, Value = unknown> {
  /** The factory options, parsed once and frozen. */
  readonly options: Options;
  /** The owning session. */
  readonly sessionId: string;
  /** Journal sequence of this call's `tool_call_started` record; with `sessionId` it names the call. */
  readonly sequence: number;
  /**
   * The caller-owned absolute deadline in epoch milliseconds (compare with `Date.now()`), or
   * `undefined` for unlimited execution.
   */
  readonly deadline: number | undefined;
  /**
   * Aborted, best effort, when the deadline passes, Brain cancels the call or the connection is
   * lost. `signal.reason` is a BrainError("call_ended") whose `details.status` is the outcome
   * Brain records: "timeout", "cancelled" or "unknown".
   */
  readonly signal: AbortSignal;
  /** Appends a durable extension event; resolves with its committed journal sequence. */
  emit(kind: string, data: unknown): Promise<number>;
  /**
   * Appends one validated result (the call stays open); resolves with its committed sequence.
   * A value failing validation is published as an `invalid_output` error outcome instead, and a
   * non-success outcome ends the call: later emit/emitResult/finish reject with execution_finished.
   */
  emitResult(value: Value | Outcome, options?: ResultOptions): Promise<number>;
  /**
   * Optionally appends a result, then commits completion. Resolves to `undefined`, so
   * `return ctx.finish(value)` publishes no second result.
   */
  finish(value?: Value | Outcome, options?: ResultOptions): Promise<void>;
  /** Independent model calls: a later issue; rejects for now. */
  model(request: unknown): Promise<never>;
  /** Environment control: a later issue; every operation rejects for now. */
  readonly environments: EnvironmentControl;
}

function unavailable(what: string): () => Promise<never> {
  // No error code says "not yet supported"; not_connected is the closest: this client has no
  // channel to the capability. The message names the limitation plainly.
  return () =>
    Promise.reject(new BrainError("not_connected", `${what} is not available in this version of @aexhq/brain.`));
}

export const modelUnavailable = unavailable("ctx.model");

export const environmentsUnavailable: EnvironmentControl = Object.freeze({
  list: unavailable("ctx.environments.list"),
  get: unavailable("ctx.environments.get"),
  create: unavailable("ctx.environments.create"),
  update: unavailable("ctx.environments.update"),
  setup: unavailable("ctx.environments.setup"),
  delete: unavailable("ctx.environments.delete"),
  call: unavailable("ctx.environments.call"),
});
