import { environmentControl, requestModel } from "./call-requests.js";
import type { ResultOptions, ToolContext } from "./context.js";
import {
  BrainError,
  EVENT_KIND_PATTERN,
  errorOutcome,
  findNonJson,
  hop,
  isReservedKind,
  issuesForWire,
  type ModelRequest,
  type Outcome,
} from "./contracts.js";
import { armDeadline } from "./deadline-timer.js";
import type { CallFrame, RequestFrame } from "./frame-encoding.js";
import { normalizeResult } from "./normalize-result.js";
import type { Ack } from "./pending-acks.js";
import { SerialQueue } from "./serial-queue.js";
import { thrownMessage } from "./thrown.js";
import type { ToolRuntime } from "./tool.js";

/** How an execution reaches Brain (the host connection; a recorder in tests). */
export interface FrameChannel {
  /**
   * Writes the frame at once, so call order is wire order, and resolves with the journal sequence
   * of its ack. Throws synchronously, having written nothing, with frame_too_large or not_connected.
   */
  send(frame: CallFrame): Promise<number | null>;
  /**
   * Writes a request frame (ctx.model, ctx.environments) and resolves with its ack, whose `value`
   * is the answer. Throws synchronously, having written nothing, like `send`.
   */
  request(frame: RequestFrame): Promise<Ack>;
}

export interface CallInfo {
  sessionId: string;
  sequence: number;
  /** Absolute, epoch ms; null = unlimited. */
  deadline: number | null;
}

/** The outcome Brain records when a call is interrupted from outside the handler. */
export type InterruptStatus = "timeout" | "cancelled" | "unknown";

interface Prepared {
  outcome: Outcome | undefined;
  content: string | undefined;
}

const noop = (): void => {};

/**
 * One invocation of one tool. States: `open` (anything may be admitted), `closing` (finish was
 * admitted: admitted frames still go out, nothing new is admitted), `ended` (nothing more is sent;
 * queued frames are rejected). Frames are written in admission order through a serial queue, while
 * their async validation starts at once.
 */
export class Execution {
  readonly context: ToolContext;
  private state: "open" | "closing" | "ended" = "open";
  private readonly queue = new SerialQueue();
  /** Admitted frames whose acks have not settled: finish waits for them. */
  private readonly unsettled = new Set<Promise<unknown>>();
  /**
   * ctx.signal's controller, made when the handler first reads the signal: most handlers never
   * do, and creating an AbortSignal cost a host more CPU than the rest of a call's bookkeeping.
   */
  private controller: AbortController | undefined;
  /** Why the call was aborted (the first reason wins), for a signal first read afterwards. */
  private abortReason: BrainError | undefined;
  private disarm: (() => void) | undefined;

  constructor(
    private readonly channel: FrameChannel,
    private readonly call: CallInfo,
    private readonly tool: ToolRuntime,
    private readonly onEnd: () => void = noop,
  ) {
    const signal = () => this.signal();
    // Made when first read, as the signal is: most handlers never touch the environments.
    let environments: ReturnType<typeof environmentControl> | undefined;
    const control = () => {
      environments ??= environmentControl(this.requester, this.ids);
      return environments;
    };
    this.context = Object.freeze({
      options: tool.options,
      sessionId: call.sessionId,
      sequence: call.sequence,
      deadline: call.deadline ?? undefined,
      get signal() {
        return signal();
      },
      emit: (kind: string, data: unknown) => this.emit(kind, data),
      emitResult: (value: unknown, options?: ResultOptions) => this.emitResult(value, options),
      finish: (value?: unknown, options?: ResultOptions) => this.finish(value, options),
      model: (request: ModelRequest) => requestModel(this.requester, this.ids, request),
      get environments() {
        return control();
      },
    });
  }

  private signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  private abort(reason: BrainError): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  private get ids() {
    return { sessionId: this.call.sessionId, sequence: this.call.sequence };
  }

  /** Requests go out only while the call is open; they never delay or reorder its frames. */
  private readonly requester = (frame: RequestFrame): Promise<Ack> => {
    if (this.state === "ended") return Promise.reject(this.finishedError());
    try {
      return this.channel.request(frame);
    } catch (err) {
      return Promise.reject(err);
    }
  };

  get ended(): boolean {
    return this.state === "ended";
  }

  /**
   * Validates the input, asks the tool's approval predicate (unless a person `approved` the call
   * already) and runs the handler. Never rejects.
   */
  async start(input: unknown, approved = false): Promise<void> {
    hop("sdk.call-started");
    // Brain owns deadlines: an expired or interrupted call runs no customer code and sends nothing.
    if (this.expired()) return this.interrupt("timeout");
    if (this.call.deadline !== null) this.disarm = armDeadline(this.call.deadline, () => this.interrupt("timeout"));
    let parsed: Awaited<ReturnType<ToolRuntime["input"]["safeParseAsync"]>>;
    try {
      parsed = await this.tool.input.safeParseAsync(input);
    } catch (err) {
      if (this.state === "open")
        this.closeWith(errorOutcome("invalid_input", `The input schema threw: ${thrownMessage(err)}`));
      return;
    }
    if (this.state !== "open") return;
    if (this.expired()) return this.interrupt("timeout");
    if (!parsed.success) {
      this.closeWith(
        errorOutcome("invalid_input", "The input failed the tool's input schema.", issuesForWire(parsed.error)),
      );
      return;
    }
    if (this.tool.needsApproval && !approved && (await this.held(parsed.data))) return;
    let returned: unknown;
    try {
      hop("sdk.handler-called");
      returned = await this.tool.run(parsed.data, this.context);
    } catch (err) {
      if (this.state === "open") this.closeWith(errorOutcome("tool_error", thrownMessage(err)));
      return;
    }
    this.onReturn(returned);
  }

  /**
   * Asks the approval predicate and sends its answer (an `approval` frame, journaled). True when
   * the call is not to run here: a person must decide first (Brain invokes it again once approved),
   * or it ended meanwhile. A predicate that throws holds the call: a gate fails closed.
   */
  private async held(input: unknown): Promise<boolean> {
    let required: boolean;
    try {
      required = (await this.tool.needsApproval!(input)) !== false;
    } catch {
      required = true;
    }
    if (this.state !== "open") return true;
    const { sessionId, sequence } = this.call;
    // Nothing of this call has been written yet, so the frame goes straight out, ahead of any other.
    let sent: Promise<number | null>;
    try {
      sent = this.channel.send({ type: "approval", sessionId, sequence, required });
    } catch {
      // Not connected: Brain ends the call `unknown`; it must not run unchecked.
      this.end();
      return true;
    }
    sent.catch(noop);
    if (!required) return false;
    // Not run here: the execution ends without an outcome of its own, and nothing more is sent.
    this.end();
    return true;
  }

  /** Ends the call from outside (deadline, cancel frame, connection loss) and aborts ctx.signal. */
  interrupt(status: InterruptStatus): void {
    if (this.state === "ended") return;
    this.end();
    this.abort(new BrainError("call_ended", `The tool call ended: ${status}.`, { status }));
  }

  private onReturn(value: unknown): void {
    // After finish (or a terminal outcome) a late return publishes nothing.
    if (this.state !== "open") return;
    const prepared = value === undefined ? Promise.resolve(noResult()) : this.prepare(value, undefined);
    this.enqueue(prepared, (p) => this.sendOutcome("return", p)).catch(noop);
  }

  private emit(kind: string, data: unknown): Promise<number> {
    if (typeof kind !== "string" || !EVENT_KIND_PATTERN.test(kind)) {
      const code = typeof kind === "string" && isReservedKind(kind) ? "reserved_kind" : "invalid_kind";
      return Promise.reject(new BrainError(code, `ctx.emit: ${JSON.stringify(kind)} is not an allowed event kind.`));
    }
    if (isReservedKind(kind)) {
      return Promise.reject(new BrainError("reserved_kind", `ctx.emit: ${kind} is one of the journal's own kinds.`));
    }
    const bad = findNonJson(data);
    if (bad !== null) {
      return Promise.reject(
        new BrainError("invalid_output", `ctx.emit: data is not plain JSON at ${bad}.`, { path: bad }),
      );
    }
    if (this.state !== "open") return Promise.reject(this.finishedError());
    const frame = {
      type: "emit" as const,
      sessionId: this.call.sessionId,
      sequence: this.call.sequence,
      kind,
      data: structuredClone(data) as Extract<CallFrame, { type: "emit" }>["data"],
    };
    return this.enqueue(Promise.resolve(frame), (f) => this.channel.send(f)).then(requireSequence);
  }

  private emitResult(value: unknown, options: ResultOptions | undefined): Promise<number> {
    if (this.state !== "open") return Promise.reject(this.finishedError());
    return this.enqueue(this.prepare(value, options), (p) => this.sendOutcome("result", p)).then(requireSequence);
  }

  private finish(value: unknown, options: ResultOptions | undefined): Promise<void> {
    if (this.state !== "open") return Promise.reject(this.finishedError());
    const prepared =
      value === undefined
        ? Promise.resolve({ outcome: undefined, content: options?.content })
        : this.prepare(value, options);
    return this.close(prepared).then(noop);
  }

  /** Finishes with an error the SDK itself produced (invalid input, a thrown exception). */
  private closeWith(outcome: Outcome): void {
    this.close(Promise.resolve({ outcome, content: undefined })).catch(noop);
  }

  private close(prepared: Promise<Prepared>): Promise<number | null> {
    this.state = "closing";
    // Most calls finish with nothing else in flight: then there is nothing to wait for.
    if (this.unsettled.size === 0) return this.enqueue(prepared, (p) => this.sendOutcome("finish", p));
    const earlier = [...this.unsettled];
    const afterEarlier = prepared.then(async (p) => {
      await Promise.allSettled(earlier);
      return p;
    });
    return this.enqueue(afterEarlier, (p) => this.sendOutcome("finish", p));
  }

  private async prepare(value: unknown, options: ResultOptions | undefined): Promise<Prepared> {
    const content = options?.content;
    if (content !== undefined && typeof content !== "string") {
      return { outcome: errorOutcome("invalid_output", "content must be a string."), content: undefined };
    }
    return { outcome: await normalizeResult(value, this.tool.output), content };
  }

  /** Admits one frame: it is written after every frame admitted before it, once `prepared` resolves. */
  private enqueue<T>(prepared: Promise<T>, send: (value: T) => Promise<number | null>): Promise<number | null> {
    prepared.catch(noop); // reported through the returned promise, not as an unhandled rejection
    const written = this.queue.add(async () => {
      const value = await prepared;
      if (this.state === "ended") throw this.finishedError();
      // Wrapped so the queue moves on once the frame is written, not once it is acknowledged.
      return { ack: send(value) };
    });
    const acked = written.then((w) => w.ack);
    this.unsettled.add(acked);
    const forget = (): void => {
      this.unsettled.delete(acked);
    };
    acked.then(forget, forget);
    return acked;
  }

  /**
   * Writes a result-bearing frame (a large one goes out in parts; its only bound is the budget).
   * When Brain refuses one because the call cannot go on (see callEndedBy), it has ended the call
   * on its side, so the execution ends here too, and ctx.signal aborts with the refusal, which is
   * how a refused `return` becomes visible.
   */
  private sendOutcome(type: "result" | "return" | "finish", prepared: Prepared): Promise<number | null> {
    hop("sdk.outcome-sending");
    const { outcome } = prepared;
    const ack = this.channel.send(this.frame(type, outcome, prepared.content));
    // A non-success outcome terminates the call; Brain ends it on its side too.
    if (type === "finish" || (outcome !== undefined && outcome.status !== "ok")) this.end();
    ack.catch((err: unknown) => this.refused(err));
    return ack;
  }

  private refused(err: unknown): void {
    if (!callEndedBy(err)) return;
    this.end();
    this.abort(err instanceof BrainError ? err : new BrainError("call_ended", String(err)));
  }

  private frame(
    type: "result" | "return" | "finish",
    outcome: Outcome | undefined,
    content: string | undefined,
  ): CallFrame {
    const frame: Record<string, unknown> = { type, sessionId: this.call.sessionId, sequence: this.call.sequence };
    if (outcome !== undefined) frame.outcome = outcome;
    if (content !== undefined) frame.content = content;
    // `result` always carries an outcome: emitResult sets one.
    return frame as CallFrame;
  }

  private end(): void {
    if (this.state === "ended") return;
    this.state = "ended";
    this.disarm?.();
    this.onEnd();
  }

  private expired(): boolean {
    return this.call.deadline !== null && Date.now() >= this.call.deadline;
  }

  private finishedError(): BrainError {
    const { sessionId, sequence } = this.call;
    return new BrainError(
      "execution_finished",
      `The tool call ${sessionId}/${sequence} has finished; emit, emitResult and finish are rejected.`,
      { sessionId, sequence },
    );
  }
}

/**
 * Refusals of a result-bearing frame after which Brain has ended the call (or it was over): the
 * budget and unstorable text end it with an error outcome in the result's place.
 */
export function callEndedBy(err: unknown): boolean {
  if (!(err instanceof BrainError)) return false;
  return ["budget_exceeded", "unstorable_text", "call_ended", "call_not_found"].includes(err.code);
}

function noResult(): Prepared {
  return { outcome: undefined, content: undefined };
}

function requireSequence(sequence: number | null): number {
  if (sequence === null)
    throw new BrainError("request_failed", "Brain acknowledged the frame without a journal sequence.");
  return sequence;
}
