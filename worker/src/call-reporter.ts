/**
 * Journals what a component reports about its call, with exactly the rules a host's frames get on
 * the server (server/src/hosts/connection.ts): the same conditional transition (`transitionCall`,
 * on the worker's connection), the same kind checks, the same budget and its `emission_rejected`
 * record, the same outcome rules. Each method resolves once its write committed; the component's
 * host function returns only then.
 */

import {
  BrainError,
  byteLength,
  type ErrorCode,
  EVENT_KIND_PATTERN,
  errorOutcome,
  findUnstorable,
  isReservedKind,
  MAX_BODY_BYTES,
  MAX_FRAME_BYTES,
  type Outcome,
  toStorable,
  UNSTORABLE_TEXT,
} from "@aexhq/brain-contracts";
import { endUnknownWhenBack, endWithInvalidOutput, journalBudgetRefusal } from "@aexhq/brain-core/calls";
import type { ToolModelCalls } from "@aexhq/brain-core/models";
import { checkedOutcome } from "@aexhq/brain-core/schemas";
import { isConnectionError, isDataException } from "@aexhq/brain-db/connect";
import { type CallAction, type ConnectionCallRef, endsCall, transitionCall } from "@aexhq/brain-db/ops";
import { isUnavailable, type JournalWriter, type PendingRepairs } from "@aexhq/brain-db/writer";
import type { Logger } from "./log.js";
import { type Checked, codeMessage, parseOutcome, storableOutcome } from "./outcomes.js";
import type { HostReply } from "./sandbox/protocol.js";

export class CallReporter {
  private returnedPhase = false;
  /** How the call is known to have ended (see onEnded), or null while it is open as far as this knows. */
  private endedAs: "own" | "elsewhere" | null = null;
  /** Journal writes in flight: any of them may be the one that ends the call. */
  private writing = 0;
  /**
   * Called once, when the call is known to have ended: `own` when a report of its own ended it,
   * `elsewhere` when a write was refused because something else (a cancel, a timer) ended it first.
   */
  onEnded: (how: "own" | "elsewhere") => void = () => {};
  /** Called for each report journaled, with the bytes it counts against the emission budget. */
  onEmitted: (report: string, bytes: number) => void = () => {};
  /**
   * The advertised output JSON Schema that ok results are checked (and stripped) against before
   * they are journaled: set by drivers whose results nothing else validates (components).
   */
  outputSchema: Record<string, unknown> | null = null;

  constructor(
    private readonly writer: JournalWriter,
    private readonly call: ConnectionCallRef,
    private readonly maxEmittedBytes: number,
    private readonly log: Logger,
    /** Model calls on the call's behalf (the WIT `model` import). */
    private readonly models?: ToolModelCalls,
    /** Where a finishing report that the database could not take leaves the call's `unknown` end. */
    private readonly repairs?: PendingRepairs,
  ) {}

  /** The worker connection the call was claimed on (what callback tokens name). */
  get connectionId(): string {
    return this.call.connectionId;
  }

  /** Whether this call is known to have ended (by us, or a write that matched no open call). */
  get ended(): boolean {
    return this.endedAs !== null;
  }

  /**
   * Whether an end the database shows may be (or is) this call's own doing: a write is in flight,
   * or a report ended it. Then the grace after its end applies, not an immediate stop.
   */
  get endsOnItsOwn(): boolean {
    return this.writing > 0 || this.endedAs === "own";
  }

  async emit(kind: string, dataText: string): Promise<HostReply> {
    if (!EVENT_KIND_PATTERN.test(kind)) return fail("invalid_kind");
    if (isReservedKind(kind)) return fail("reserved_kind");
    let data: unknown;
    try {
      data = JSON.parse(dataText);
    } catch {
      return fail("invalid_frame", "emit data is not JSON");
    }
    // Refused before any write, as the server refuses a host's: the call may go on.
    const where = findUnstorable(data, "$.data");
    if (where !== null) return fail("unstorable_text", `The event data contains ${UNSTORABLE_TEXT} at ${where}.`);
    // The frame a host would send; over the limit it is refused, as the SDK refuses it.
    const frame = { type: "emit", sessionId: this.call.sessionId, sequence: this.call.seq, kind, data, id: 0 };
    const bytes = byteLength(JSON.stringify(frame));
    if (bytes > MAX_FRAME_BYTES) {
      return fail("frame_too_large", `The emit frame is ${bytes} bytes; the limit is ${MAX_FRAME_BYTES}.`);
    }
    return this.apply({ type: "emit", kind, data });
  }

  async emitResult(outcomeText: string): Promise<HostReply> {
    return this.publish("result", outcomeText);
  }

  async finish(outcomeText: string | null): Promise<HostReply> {
    if (outcomeText === null) return this.apply({ type: "finish" });
    return this.publish("finish", outcomeText);
  }

  /**
   * The WIT `model` import: a ModelRequest JSON in, the ModelResult JSON out, once the provider
   * answered and the answer was journaled (see ToolModelCalls). Errors name their code first.
   */
  async model(requestText: string): Promise<HostReply> {
    if (!this.models) return fail("not_supported", "this worker makes no model calls");
    if (requestText.length > MAX_BODY_BYTES) return fail("invalid_model_request", "the request is too large");
    let request: unknown;
    try {
      request = JSON.parse(requestText);
    } catch {
      return fail("invalid_model_request", "the request is not JSON");
    }
    try {
      const answer = await this.models.call(this.call, request);
      return { ok: true, seq: answer.sequence, value: JSON.stringify(answer.value) };
    } catch (error) {
      if (error instanceof BrainError) return fail(error.code, error.message);
      this.log.error({ err: error, ...this.call }, "a component's model call failed");
      return fail("internal_error", "the model call failed inside the worker");
    }
  }

  /** `returned`: ends the synchronous phase, once; later calls change nothing. */
  async returned(): Promise<HostReply> {
    if (this.returnedPhase || this.ended) return { ok: true, seq: null };
    this.returnedPhase = true;
    return this.apply({ type: "return" });
  }

  /** `run` returned: a call still open is completed as if it had called finish with no result. */
  async completeAfterRun(): Promise<void> {
    if (this.ended) return;
    await this.returned();
    if (!this.ended) await this.apply({ type: "finish" });
  }

  /** Ends the call with an error outcome (a trap, a failed setup), unless it already ended. */
  async failWith(outcome: Outcome): Promise<void> {
    if (this.ended) return;
    // Brain's own error, which may quote what a component or a URL answered: made storable, so
    // the end is always recorded.
    await this.apply({ type: "finish", outcome: toStorable(outcome) });
  }

  /**
   * Ends the call with an outcome the driver already checked (an MCP Environment's answer), with
   * the `content` the model reads in place of the value; the budget applies as to any result.
   */
  async finishWith(outcome: Outcome, content?: string): Promise<void> {
    if (this.ended) return;
    await this.apply({ type: "finish", outcome: toStorable(outcome), content });
  }

  /**
   * A result-bearing report. A malformed outcome (or a value failing the output schema) is
   * journaled as `invalid_output`, an error outcome, so the call ends, and the component is told.
   * Its size is bounded only by the activation's budget.
   */
  private async publish(type: "result" | "finish", text: string): Promise<HostReply> {
    const parsed = parseOutcome(text);
    const checked = parsed.ok ? storableOutcome(this.checkOutput(parsed.outcome)) : parsed;
    const action: CallAction =
      type === "result" ? { type: "result", outcome: checked.outcome } : { type: "finish", outcome: checked.outcome };
    const reply = await this.apply(action);
    if (checked.ok || !reply.ok) return reply;
    const message = checked.outcome.status === "error" ? checked.outcome.error.message : undefined;
    return fail(checked.code, message);
  }

  /**
   * The backstop for what Postgres refuses as data despite the checks: a result-bearing report
   * ends the call with an `invalid_output` error in its place, as the server does for a host.
   */
  private async unstorable(action: CallAction, reason: string): Promise<HostReply> {
    const message = `The ${action.type === "emit" ? "event data" : "tool's output"} cannot be stored (${reason}).`;
    if (action.type !== "emit") {
      try {
        const result = await endWithInvalidOutput(this.writer, this.call, action.type, message);
        if (result.seq === null) this.markEnded("elsewhere");
        else if (result.ended) this.markEnded();
      } catch (error) {
        this.log.error({ err: error, ...this.call }, "a component's invalid_output could not be recorded");
        return fail("internal_error", "the journal write failed; it was not recorded");
      }
    }
    return fail("unstorable_text", message);
  }

  /**
   * A result larger than the activation's budget could ever admit (an HTTP Environment's body, say):
   * refused, and the call ends, as any result-bearing report the budget refuses.
   */
  async exceedsBudget(bytes: number): Promise<void> {
    if (this.ended) return;
    await this.refuseOverBudget({ type: "finish" }, bytes);
  }

  /**
   * The budget refuses a report; the refusal is journaled (see refuseEmission). An extension event
   * is only refused: the tool may go on. A result-bearing report is the call's answer and cannot be
   * recorded, so the call ends at once with a `budget_exceeded` error outcome in its place, written
   * whatever the budget says, as the server does for a host (refuseOverBudget).
   */
  private async refuseOverBudget(action: CallAction, bytes: number): Promise<HostReply> {
    const { message, ended } = await journalBudgetRefusal(this.writer, this.call, action, bytes);
    if (ended?.seq === null) this.markEnded("elsewhere");
    else if (ended?.ended) this.markEnded();
    return fail("budget_exceeded", message);
  }

  /** Successful output is validated; non-success outcomes bypass it. */
  private checkOutput(outcome: Outcome): Checked {
    if (this.outputSchema === null || outcome.status !== "ok") return { ok: true, outcome };
    const checked = checkedOutcome(this.outputSchema, outcome.value, { strip: true });
    return checked.status === "ok"
      ? { ok: true, outcome: checked }
      : { ok: false, code: "invalid_output", outcome: checked };
  }

  private markEnded(how: "own" | "elsewhere" = "own"): void {
    if (this.endedAs !== null) return;
    this.endedAs = how;
    this.onEnded(how);
  }

  private async apply(action: CallAction): Promise<HostReply> {
    this.writing++;
    try {
      return await this.write(action);
    } finally {
      this.writing--;
    }
  }

  private async write(action: CallAction): Promise<HostReply> {
    try {
      const result = await this.writer.submit(transitionCall(this.call, action, this.maxEmittedBytes));
      if (result.overBudget) return await this.refuseOverBudget(action, result.bytes);
      if (result.seq === null) {
        // The call was ours (we claimed it), so it is not missing: something ended it first.
        this.markEnded("elsewhere");
        return fail("call_ended");
      }
      this.onEmitted(action.type, result.bytes);
      if (result.ended) this.markEnded();
      return { ok: true, seq: result.seq };
    } catch (error) {
      if (isDataException(error)) return this.unstorable(action, (error as Error).message);
      if (isUnavailable(error) || isConnectionError(error)) {
        // The database is away. A report that would have ended the call is not sent again, so
        // the call ends `unknown` once the database answers instead of staying open for good.
        if (this.repairs && endsCall(action)) {
          endUnknownWhenBack(this.writer, this.repairs, this.call);
          this.markEnded();
        }
        return fail("database_unavailable");
      }
      this.log.error({ err: error, ...this.call }, "a component's journal write failed");
      return fail("internal_error", "the journal write failed; it was not recorded");
    }
  }
}

function fail(code: ErrorCode, message?: string): HostReply {
  return { ok: false, error: codeMessage(code, message) };
}

/** For setup failures: the ordinary tool error path, no retry. */
export function setupFailed(message: string, details?: unknown): Outcome {
  return errorOutcome("setup_failed", message.slice(0, 8192), details);
}
