import type { EnvironmentControl, ResultOptions, ToolContext } from "../context.js";
import {
  BrainError,
  type CallFrameBody,
  ENVIRONMENT_OPERATIONS,
  errorOutcome,
  type HttpToolInvocation,
  issuesForWire,
  type Outcome,
} from "../contracts.js";
import { armDeadline } from "../deadline-timer.js";
import { callEndedBy } from "../execution.js";
import { normalizeResult } from "../normalize-result.js";
import { SerialQueue } from "../serial-queue.js";
import { thrownMessage } from "../thrown.js";
import type { ToolRuntime } from "../tool.js";
import { encodeCallbackFrame, postCallbackFrame } from "./callback.js";

interface Prepared {
  outcome: Outcome | undefined;
  content: string | undefined;
}

const noop = (): void => {};

/**
 * One invocation of one tool served over HTTP (the Application tool extension). The same rules as
 * a host execution (Execution), within the request's lifetime:
 * - `emitResult` and `finish` are POSTed to the call's callback one after another, in admission
 *   order, each resolving once Brain has committed it (the sequence Brain answered); finish waits
 *   for earlier results, and after it (or a non-success outcome) both reject with execution_finished;
 * - `return value` finishes with it; returning nothing leaves the call open, and Brain ends it
 *   `tool_unfinished` once the request is answered; a thrown exception is `tool_error`;
 * - `ctx.emit`, `ctx.model` and `ctx.environments` reject with not_available_in_http_tool;
 * - once the request is over (answered, closed by Brain, or its deadline passed) every operation
 *   rejects with request_ended and `ctx.signal` is aborted: nothing more reaches the journal.
 */
export class HttpToolCall {
  readonly context: ToolContext;
  private state: "open" | "closing" | "ended" = "open";
  private over = false;
  private readonly queue = new SerialQueue();
  private readonly controller = new AbortController();
  private disarm: () => void = noop;

  constructor(
    private readonly invocation: HttpToolInvocation,
    private readonly tool: ToolRuntime,
  ) {
    const refuse = (what: string) => () => this.refuse(what);
    const environments = Object.fromEntries(
      ENVIRONMENT_OPERATIONS.map((op) => [op, refuse(`ctx.environments.${op}`)]),
    ) as unknown as EnvironmentControl;
    this.context = Object.freeze({
      options: tool.options,
      sessionId: invocation.sessionId,
      sequence: invocation.sequence,
      deadline: invocation.deadline ?? undefined,
      signal: this.controller.signal,
      emit: refuse("ctx.emit"),
      emitResult: (value: unknown, options?: ResultOptions) => this.emitResult(value, options),
      finish: (value?: unknown, options?: ResultOptions) => this.finish(value, options),
      model: refuse("ctx.model"),
      environments: Object.freeze(environments),
    });
  }

  /** Whether the call was ended from here (finish, or a non-success outcome). */
  get finished(): boolean {
    return this.state === "ended";
  }

  /**
   * Validates the input and runs the handler. Resolves once the handler has returned and every
   * frame it admitted has been answered, or once the request is over. Never rejects.
   */
  async run(): Promise<void> {
    const { deadline } = this.invocation;
    if (this.over) return;
    // Brain owns deadlines: an expired call runs no customer code and sends nothing.
    if (deadline !== null && Date.now() >= deadline) return this.end(deadlineReason());
    if (deadline !== null) this.disarm = armDeadline(deadline, () => this.end(deadlineReason()));
    const stopped = new Promise<void>((resolve) => this.controller.signal.addEventListener("abort", () => resolve()));
    await Promise.race([this.execute(), stopped]);
  }

  /** The request is over: whatever the handler does next reaches nothing. */
  end(reason: BrainError = requestEnded("The HTTP tool request has been answered.")): void {
    if (this.over) return;
    this.over = true;
    this.disarm();
    this.controller.abort(reason);
  }

  private async execute(): Promise<void> {
    let parsed: Awaited<ReturnType<ToolRuntime["input"]["safeParseAsync"]>>;
    try {
      parsed = await this.tool.input.safeParseAsync(this.invocation.input);
    } catch (err) {
      return this.closeWith(errorOutcome("invalid_input", `The input schema threw: ${thrownMessage(err)}`));
    }
    if (this.over) return;
    if (!parsed.success) {
      const issues = issuesForWire(parsed.error);
      return this.closeWith(errorOutcome("invalid_input", "The input failed the tool's input schema.", issues));
    }
    let returned: unknown;
    try {
      returned = await this.tool.run(parsed.data, this.context);
    } catch (err) {
      return this.closeWith(errorOutcome("tool_error", thrownMessage(err)));
    }
    // Over HTTP, returning a value finishes with it; after finish a late return publishes nothing.
    if (returned !== undefined && this.state === "open" && !this.over) this.finish(returned, undefined).catch(noop);
    await this.queue.add(noop);
  }

  private refuse(what: string): Promise<never> {
    if (this.over) return Promise.reject(this.endedError());
    return Promise.reject(
      new BrainError(
        "not_available_in_http_tool",
        `${what} is not available to an HTTP application tool: it gets no model calls, arbitrary events or Environment control.`,
      ),
    );
  }

  private emitResult(value: unknown, options: ResultOptions | undefined): Promise<number> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    return this.enqueue("result", this.prepare(value, options, true));
  }

  private finish(value: unknown, options: ResultOptions | undefined): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    this.state = "closing";
    return this.enqueue("finish", this.prepare(value, options, value !== undefined)).then(noop);
  }

  /** Finishes with an error the SDK itself produced (invalid input, a thrown exception). */
  private async closeWith(outcome: Outcome): Promise<void> {
    if (this.state !== "open" || this.over) return;
    this.state = "closing";
    await this.enqueue("finish", Promise.resolve({ outcome, content: undefined })).catch(noop);
  }

  private refusal(): BrainError | null {
    if (this.over) return this.endedError();
    if (this.state !== "open") return this.finishedError();
    return null;
  }

  private async prepare(value: unknown, options: ResultOptions | undefined, withValue: boolean): Promise<Prepared> {
    const content = options?.content;
    if (content !== undefined && typeof content !== "string") {
      return { outcome: errorOutcome("invalid_output", "content must be a string."), content: undefined };
    }
    return { outcome: withValue ? await normalizeResult(value, this.tool.output) : undefined, content };
  }

  /** POSTs one frame after every frame admitted before it has been answered. */
  private enqueue(type: "result" | "finish", prepared: Promise<Prepared>): Promise<number> {
    prepared.catch(noop); // reported through the returned promise
    return this.queue.add(async () => {
      const p = await prepared;
      if (this.over) throw this.endedError();
      if (this.state === "ended") throw this.finishedError();
      return this.send(type, p);
    });
  }

  /**
   * A non-success outcome ends the call, and so does a refusal after which Brain has ended it
   * (the budget, unstorable text: see callEndedBy), so nothing more is sent.
   */
  private send(type: "result" | "finish", prepared: Prepared): Promise<number> {
    const { outcome } = prepared;
    const text = encodeCallbackFrame(frame(type, outcome, prepared.content));
    if (type === "finish" || (outcome !== undefined && outcome.status !== "ok")) this.state = "ended";
    return postCallbackFrame(this.invocation.callback, text).catch((err: unknown) => {
      if (callEndedBy(err)) this.state = "ended";
      throw err;
    });
  }

  private endedError(): BrainError {
    const reason = this.controller.signal.reason;
    return reason instanceof BrainError && reason.code === "request_ended"
      ? reason
      : requestEnded("The HTTP tool request is over (its deadline passed).");
  }

  private finishedError(): BrainError {
    const { sessionId, sequence } = this.invocation;
    return new BrainError(
      "execution_finished",
      `The tool call ${sessionId}/${sequence} has finished; emitResult and finish are rejected.`,
      { sessionId, sequence },
    );
  }
}

function frame(type: "result" | "finish", outcome: Outcome | undefined, content: string | undefined): CallFrameBody {
  const body: Record<string, unknown> = { type };
  if (outcome !== undefined) body.outcome = outcome;
  if (content !== undefined) body.content = content;
  return body as CallFrameBody;
}

function requestEnded(message: string): BrainError {
  return new BrainError("request_ended", `${message} No work continues beyond its lifetime.`);
}

function deadlineReason(): BrainError {
  return new BrainError("call_ended", "The tool call ended: timeout.", { status: "timeout" });
}
