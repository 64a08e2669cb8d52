import type { RecordPayload } from "@aexhq/brain-contracts";
import {
  createProvider,
  type ModelAttempt,
  ModelCallError,
  type ModelProvider,
  type ProviderResponse,
  recordedResponse,
} from "@aexhq/brain-core/models";
import { type Appended, endCalls, type NewRecord, rel } from "@aexhq/brain-db/ops";
import { isUnavailable, type WrittenRecord } from "@aexhq/brain-db/writer";
import type { Services } from "../services.js";
import { callerDeadline } from "./call-deadline.js";
import { DeadlineTimers } from "./deadlines.js";
import type { SessionInfo } from "./session-info.js";
import { JournalBehind, SessionJournal } from "./session-journal.js";
import { type LoopState, roundSettled } from "./state.js";
import type { TurnError } from "./turns.js";
import { WakeWindow } from "./wake-window.js";

export type ActorDeps = Pick<
  Services,
  | "availability"
  | "boss"
  | "config"
  | "deadlineJobs"
  | "dispatch"
  | "live"
  | "log"
  | "metrics"
  | "modelTransport"
  | "quotas"
  | "sql"
  | "turns"
  | "writer"
>;

/**
 * Why an actor stopped running its session. "idle": it let go of its state after
 * BRAIN_SESSION_IDLE_MS with nothing to do; the session stays this server's (see actors.ts).
 */
/** `behind`: the database lost records this actor had folded (a fail-over); it is read again. */
export type StopReason = "ended" | "fenced" | "shutdown" | "idle" | "behind";

/**
 * Runs one session's Agentloop on this server while it holds the session's fencing epoch. All of
 * its writes carry the epoch: once another server takes the session over, they write nothing and
 * the actor stops. Steps never overlap: a wake during a step only marks the actor dirty.
 */
export class SessionActor {
  readonly window: WakeWindow;
  private readonly journal: SessionJournal;
  private readonly provider: ModelProvider;
  private running = false;
  private dirty = false;
  private stopped: StopReason | null = null;
  private readonly abort = new AbortController();
  private readonly deadlines: DeadlineTimers;
  /** The last wake's window, journaled with the model call it led to. */
  private lastWindow: { openedAt: number; firedAt: number } | null = null;
  /** When this actor last had anything to do (epoch ms): a wake, a step, a commit it heard. */
  private lastBusy = Date.now();
  /** Park at the first tick it is idle, not after the idle time: see parkWhenIdle. */
  private parkSoon = false;

  constructor(
    private readonly rt: ActorDeps,
    readonly session: SessionInfo,
    readonly epoch: number,
    private readonly onStop: (actor: SessionActor, reason: StopReason) => void,
  ) {
    this.journal = new SessionJournal(rt, session.id, epoch, session.tokenId);
    this.provider = createProvider(session.model, rt.modelTransport);
    this.deadlines = new DeadlineTimers(rt, session.id);
    this.window = new WakeWindow(rt.config.wakeWindowMs, (w) => {
      if (w) rt.metrics.wakeWindow(w.firedAt - w.openedAt);
      this.lastWindow = w;
      this.wake();
    });
  }

  /** The session's folded journal. */
  get state(): LoopState {
    return this.journal.state;
  }

  get isStopped(): boolean {
    return this.stopped !== null;
  }

  /** Runs steps until nothing is left to do, reading the journal first (a claim, a rescan). */
  kick(): void {
    this.journal.distrust();
    this.wake();
  }

  /**
   * A commit touched the session: `records` is what it wrote, when this process wrote and
   * described all of it; undefined means the journal must be read.
   */
  heard(records: WrittenRecord[] | undefined): void {
    this.lastBusy = Date.now();
    this.parkSoon = false;
    this.journal.heard(records);
  }

  /** Runs steps until nothing is left to do; wakes that arrive meanwhile are coalesced. */
  private wake(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.running) return;
    this.running = true;
    void this.drive();
  }

  /** Nothing running or queued: a new message can start its activation in the same commit. */
  get idle(): boolean {
    const s = this.state;
    return !this.running && !this.stopped && !s.activation && s.messages.length === 0 && s.backlog.length === 0;
  }

  /**
   * Whether this actor may let go of its state: idle for `idleMs`, with no call open (a call's
   * deadline timer and its metrics' start time live in the actor) and no wake window pending.
   */
  parkable(now: number, idleMs: number): boolean {
    const quiet = this.parkSoon || now - this.lastBusy >= idleMs;
    return this.idle && this.state.open.size === 0 && !this.window.pending && quiet;
  }

  /**
   * This actor was started by the orphan sweep, not by anything happening to its session: once its
   * catch-up finds nothing to do, it parks at the next tick. A server taking over a killed one's
   * sessions then holds only those with work, not every one until the idle time passes. Any
   * commit to the session (heard) or message taken before that keeps the usual idle time.
   */
  parkWhenIdle(): void {
    this.parkSoon = true;
  }

  /**
   * The fast path for a user message on the server that runs its session: the message, the
   * activation it starts and the model call go in one commit instead of two, with no wake-up in
   * between. Resolves with the message's sequence, or null when this actor could not write (it was
   * fenced or the session ended) and the caller should append the message the ordinary way.
   */
  takeMessage(text: string, deadline: number | null): Promise<number | null> {
    this.parkSoon = false;
    return new Promise((resolve) => {
      this.running = true;
      this.dirty = false;
      void this.drive(async () => {
        const outcome = await this.callModel(
          [
            { kind: "user_message", payload: messagePayload(text, deadline) },
            { kind: "activation_started", payload: { cause: "user_message", message: rel(-1) } },
          ],
          (written) => resolve(written ? written[0]!.seq : null),
          true,
        );
        return outcome === "ended";
      }).finally(() => resolve(null));
    });
  }

  stop(reason: StopReason): void {
    if (this.stopped) return;
    this.stopped = reason;
    this.window.cancel();
    this.deadlines.clear();
    this.abort.abort(new Error(`session actor stopped: ${reason}`));
    this.onStop(this, reason);
  }

  private async drive(first?: () => Promise<boolean>): Promise<void> {
    const seqBefore = this.state.lastSeq;
    let busy = first !== undefined;
    try {
      // A step that wrote something may have left more to do (queued messages, a backlog).
      let progressed = first ? await first() : false;
      while ((this.dirty || progressed) && !this.stopped) {
        // Only a wake means the journal holds something this actor has not folded: after its own
        // appends (folded as written) it looks at its state again without reading. Records that
        // wake nobody (emits) are read when the next append finds a gap in the sequence.
        const woken = this.dirty;
        this.dirty = false;
        if (woken) await this.journal.catchUp();
        progressed = await this.step();
        busy ||= progressed;
        this.deadlines.sync(this.state);
      }
    } catch (error) {
      busy = true;
      if (error instanceof JournalBehind) {
        this.rt.log.error({ err: error, sessionId: this.session.id }, "the database lost the end of this journal");
        return this.stop("behind");
      }
      // Retry later from the journal rather than spin: the next wake or rescan picks it up (after
      // an outage, the rescan that follows the database's return).
      if (!this.rt.availability.observe(error) && !isUnavailable(error)) {
        this.rt.log.error({ err: error, sessionId: this.session.id }, "agentloop step failed");
      }
    } finally {
      this.running = false;
      // A look that found nothing new (a rescan's: every second when polling) is not activity.
      if (busy || this.state.lastSeq !== seqBefore) this.lastBusy = Date.now();
    }
  }

  /** Does the one next thing the journal calls for; false when there is nothing to do. */
  private async step(): Promise<boolean> {
    const s = this.state;
    if (s.ended) {
      this.stop("ended");
      return false;
    }
    if (s.openModelCall !== null) {
      await this.recoverInterruptedModelCall(s.openModelCall);
      return true;
    }
    if (s.activation?.cancelled) {
      await this.cancelActivation();
      return true;
    }
    if (s.activation) {
      if (!roundSettled(s)) {
        this.lastWindow = null;
        return false;
      }
      // Observations reach the model only through a wake window (5 ms from the first of them):
      // a round this actor saw settle on some other wake-up waits for its window to close.
      if (this.lastWindow === null) {
        this.window.observe();
        return false;
      }
      return (await this.callModel([])) === "ended";
    }
    const message = s.messages[0];
    if (message) {
      const start: NewRecord = { kind: "activation_started", payload: { cause: "user_message", message: message.seq } };
      return (await this.callModel([start])) === "ended";
    }
    if (s.backlog.length > 0) {
      if (this.lastWindow === null) {
        this.window.observe();
        return false;
      }
      const payload: RecordPayload<"activation_started"> = {
        cause: "observations",
        observations: s.backlog.map((o) => o.seq),
      };
      if (this.lastWindow) payload.wake = this.lastWindow;
      return (await this.callModel([{ kind: "activation_started", payload }])) === "ended";
    }
    return false;
  }

  /** Appends with the fencing epoch (see SessionJournal.append); stops when fenced or ended. */
  private async append(
    records: NewRecord[],
    ownMessage = false,
    committed?: (written: Appended[]) => void,
  ): Promise<Appended[] | null> {
    const written = await this.journal.append(records, ownMessage, committed);
    if (written === null) this.stop(this.state.ended ? "ended" : "fenced");
    return written;
  }

  /**
   * One model call and what follows from its answer. "dispatched": tool calls went out, and the
   * loop continues only when their observations wake it (through the window), never by looking
   * again right away; "ended": the activation ended, so queued work may start at once.
   */
  private async callModel(
    start: NewRecord[],
    onStarted?: (written: Appended[] | null) => void,
    ownMessage = false,
  ): Promise<"dispatched" | "ended" | "stopped"> {
    const wake = start.length === 0 && this.lastWindow ? { wake: this.lastWindow } : {};
    this.lastWindow = null;
    const opensActivation = start.some((r) => r.kind === "activation_started");
    if (!opensActivation && this.state.activationModelCalls >= this.rt.config.maxModelCalls) {
      // The activation's calls (the loop's and its tools') used the whole budget: it fails here.
      const a = this.state.activation!.seq;
      const error = {
        code: "model_budget_exceeded",
        message: `BRAIN_MAX_MODEL_CALLS (${this.rt.config.maxModelCalls}) reached`,
      };
      await this.append([{ kind: "activation_ended", payload: this.failing(a, error) }]);
      return "ended";
    }
    const activation = opensActivation ? rel(-1) : this.state.activation!.seq;
    const written = await this.append(
      [...start, { kind: "model_call_started", payload: { origin: { type: "agentloop" }, activation, ...wake } }],
      ownMessage,
    );
    onStarted?.(written);
    if (!written) return "stopped";
    const callSeq = written[written.length - 1]!.seq;
    const activationSeq = this.state.activation!.seq;
    const attempts: ModelAttempt[] = [];
    const live = this.rt.live.open(this.session.id, callSeq);
    let response: ProviderResponse;
    try {
      response = await this.provider.complete(
        {
          ...(this.state.system === null ? {} : { system: this.state.system }),
          messages: this.state.conversation,
          tools: this.modelTools(),
        },
        {
          signal: this.abort.signal,
          index: this.state.modelCalls - 1 - this.state.inheritedModelCalls,
          origin: "agentloop",
          attempts,
          deadline: callerDeadline(this.state),
          onText: live.push,
        },
      );
    } catch (error) {
      return this.stopped ? "stopped" : await this.modelFailed(error, callSeq, activationSeq, attempts);
    } finally {
      live.close();
    }
    const ended = endedRecord(callSeq, response, attempts);
    if (response.toolCalls.length === 0) {
      await this.append([
        ended,
        { kind: "assistant_message", payload: { activation: activationSeq, text: response.text } },
        { kind: "activation_ended", payload: this.ending(activationSeq, "completed", response.text) },
      ]);
      return "ended";
    }
    // Calls past the owner's open-calls quota are journaled and ended at once, quota_exceeded.
    const room = await this.rt.quotas.openCallRoom(this.session.tokenId, response.toolCalls.length);
    if (this.stopped) return "stopped";
    const calls = this.rt.dispatch.plan(
      this.session,
      activationSeq,
      response.toolCalls,
      callerDeadline(this.state),
      room,
    );
    const records = [ended, ...calls];
    // The invoke frames leave from the commit itself, before this resumes (dispatch.ts).
    const written2 = await this.append(records, false, (w) =>
      this.rt.dispatch.sendCommitted(this.session.id, w, records),
    );
    if (!written2) return "stopped";
    await this.rt.dispatch.refuseUnrouted(this.session.id, written2, records);
    return "dispatched";
  }

  /** The provider failed: the model call ends with its error, and so does the activation. */
  private async modelFailed(
    error: unknown,
    callSeq: number,
    activationSeq: number,
    attempts: ModelAttempt[],
  ): Promise<"ended"> {
    const message = error instanceof Error ? error.message : String(error);
    const code = error instanceof ModelCallError ? error.code : "model_error";
    // A context window's numbers travel with the error, to the SDK's BrainError details.
    const details = error instanceof ModelCallError && error.context ? { details: error.context } : {};
    const outcome = { status: "error" as const, error: { code, message, ...details } };
    await this.append([
      { kind: "model_call_ended", payload: { call: callSeq, outcome, ...attemptsOf(attempts) } },
      { kind: "activation_ended", payload: this.failing(activationSeq, { code, message, ...details }) },
    ]);
    return "ended";
  }

  private ending(
    activation: number,
    status: RecordPayload<"activation_ended">["status"],
    text: string,
  ): RecordPayload<"activation_ended"> {
    return { activation, message: this.state.activation?.message ?? null, status, text };
  }

  /** A failed activation always says why: the SDK rejects `send` with this code. */
  private failing(activation: number, error: TurnError): RecordPayload<"activation_ended"> {
    return { ...this.ending(activation, "failed", ""), error };
  }

  private modelTools() {
    return this.session.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  }

  /** session.cancel(): the turn's open calls end `cancelled`, then the activation. */
  private async cancelActivation(): Promise<void> {
    const a = this.state.activation!;
    this.window.cancel();
    const open = [...this.state.open].filter((seq) => this.state.calls.get(seq)?.activation === a.seq);
    if (open.length > 0) {
      await this.rt.writer.submit(
        endCalls({ sessionId: this.session.id, seqs: open }, { status: "cancelled", cause: "turn_cancelled" }),
      );
      await this.journal.catchUp();
    }
    await this.append([{ kind: "activation_ended", payload: this.ending(a.seq, "cancelled", "") }]);
  }

  /** A provider call cut off by a crash has an unknown outcome and is never replayed. */
  private async recoverInterruptedModelCall(callSeq: number): Promise<void> {
    const activation = this.state.activation?.seq ?? null;
    const records: NewRecord[] = [
      { kind: "model_call_ended", payload: { call: callSeq, outcome: { status: "unknown", cause: "server_lost" } } },
    ];
    if (activation !== null) {
      const error = {
        code: "model_call_lost",
        message: "The server making the model call was lost; it is not replayed.",
      };
      records.push({ kind: "activation_ended", payload: this.failing(activation, error) });
    }
    await this.append(records);
  }
}

/** A model call's answer, as its model_call_ended record. */
function endedRecord(callSeq: number, response: ProviderResponse, attempts: ModelAttempt[]): NewRecord {
  return {
    kind: "model_call_ended",
    payload: {
      call: callSeq,
      outcome: { status: "ok" },
      response: recordedResponse(response),
      model: response.model,
      usage: response.usage,
      ...attemptsOf(attempts),
    },
  };
}

/** A retried call's attempts, for its record; nothing for a call answered at once. */
function attemptsOf(attempts: ModelAttempt[]): { attempts?: ModelAttempt[] } {
  return attempts.length > 1 ? { attempts } : {};
}

/** A user_message's payload: its text, and the turn's caller deadline when it has one. */
export function messagePayload(text: string, deadline: number | null): RecordPayload<"user_message"> {
  return deadline === null ? { text } : { text, deadline };
}

/** The payload as written: `rel(n)` fields become the sequence of the record n places away. */
