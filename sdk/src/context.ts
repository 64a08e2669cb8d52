import type { EnvironmentView, ModelRequest, ModelResult, Outcome } from "./contracts.js";
import type { HttpEnvironmentOptions } from "./environment.js";

/** Model-facing text that accompanies a result; it never replaces the structured output. */
export interface ResultOptions {
  content?: string;
}

/**
 * ctx.environments: the session's Environments, limited to what the session was authorised for
 * (`environmentControl` at creation; anything else rejects with environment_denied). Every
 * operation is journaled (`environment_operation`); header values are never shown.
 */
export interface EnvironmentControl {
  list(): Promise<EnvironmentView[]>;
  get(name: string): Promise<EnvironmentView>;
  /** A new HTTP Environment in this session (environment_exists if the name is taken). */
  create(spec: HttpEnvironmentOptions): Promise<EnvironmentView>;
  /** Replaces the given fields; a changed configuration must be set up again. */
  update(name: string, patch: Partial<Omit<HttpEnvironmentOptions, "name">>): Promise<EnvironmentView>;
  /** Runs the Environment's setup now (again, if it failed before). */
  setup(name: string): Promise<EnvironmentView>;
  delete(name: string): Promise<void>;
  /**
   * Invokes a descriptor in the Environment, as a placed tool would be invoked: resolves with the
   * result value, or rejects with the error outcome's code (e.g. http_error, setup_failed).
   */
  call(name: string, invocation: { descriptor: unknown; input?: unknown }): Promise<unknown>;
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
   * `undefined` for unlimited execution: the earliest of the session's and the turn's deadline,
   * the tool's `timeoutMs` and the operator's cap, fixed when the call started and never renewed.
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
  /**
   * Calls the session's model (its fixed provider, model and credentials) with explicit messages:
   * an omitted system prompt is empty, omitted tools are none, and there is no default response
   * format. Shares the activation's model-call budget; journaled (with this call as its origin)
   * before it resolves; stopped when the call ends or reaches its deadline.
   */
  model(request: ModelRequest): Promise<ModelResult>;
  /** Environment control, as far as the session was authorised. */
  readonly environments: EnvironmentControl;
}
