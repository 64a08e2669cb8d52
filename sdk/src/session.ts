import { ApprovalFold } from "./approval-fold.js";
import {
  ApprovalDecisionSchema,
  BrainError,
  CancelCallResultSchema,
  CancelTurnResultSchema,
  type JournalEvent,
  type PendingApproval,
  PendingApprovalListSchema,
  PostMessageBodySchema,
  PostMessageResultSchema,
  type Session as SessionInfo,
  SessionSchema,
} from "./contracts.js";
import type { HostConnection } from "./host-connection.js";
import type { HttpClient } from "./http-client.js";
import { ndjsonLines } from "./ndjson.js";
import { parseEvent } from "./parse-event.js";
import { streamTurn, type TurnStreamPart } from "./stream-turn.js";
import { answerTurn, SEND_WAIT_MS } from "./turn.js";

export type { SessionInfo };

/** Per-request options for the calls that create something. */
export interface RequestOptions {
  /** Sent as `Idempotency-Key`: the same key and body returns the same answer. */
  idempotencyKey?: string;
}

export interface SendOptions extends RequestOptions {
  /** Aborting it stops waiting (the turn goes on; `cancel()` stops it) and rejects with its reason. */
  signal?: AbortSignal;
  /**
   * A caller-owned deadline (epoch ms) for the tool calls this turn makes: each ends `timeout` at
   * the earliest of this, the session's deadline and its tool's `timeoutMs`. It bounds the turn's
   * tools, not how long `send` waits (use `signal` for that), and never extends the session's.
   */
  deadline?: number;
  /** The same as a duration from when Brain accepts the message; with `deadline`, the earlier wins. */
  timeoutMs?: number;
}

export interface EventsOptions {
  /** Only events with a larger sequence; 0 (the default) starts at the beginning. */
  after?: number;
  /** Keep the stream open for events committed later. */
  follow?: boolean;
  /** Aborting it ends the iteration quietly. */
  signal?: AbortSignal;
}

/** What a session handle needs from its Brain client. */
export interface SessionDeps {
  http: HttpClient;
  host: HostConnection;
}

/** A handle on one session. Obtain it from `brain.sessions.create`, `get` or `list`. */
export class Session {
  readonly id: string;
  #info: SessionInfo;
  readonly #deps: SessionDeps;

  constructor(info: SessionInfo, deps: SessionDeps) {
    this.id = info.id;
    this.#info = info;
    this.#deps = deps;
  }

  /** The session as Brain last described it (creation, get, list or end). */
  get info(): SessionInfo {
    return this.#info;
  }

  /**
   * Posts a user message and waits for the activation it starts, however long it takes: resolves
   * with its final text when it completes; rejects with the activation's error code when it
   * fails (e.g. `model_budget_exceeded`, `model_call_lost`, a `model_*` provider code), with
   * `turn_cancelled` when it is cancelled or the session ends first. The wait follows the
   * journal, so it survives reconnections, server restarts and fail-over (see docs/sessions.md).
   */
  async send(text: string, options: SendOptions = {}): Promise<string> {
    const { deadline, timeoutMs } = options;
    const body = PostMessageBodySchema.safeParse({ text, deadline, timeoutMs });
    if (!body.success) throw new BrainError("invalid_request", "The message is invalid.", body.error.issues);
    const response = await this.#deps.http.fetch("POST", `${this.#path()}/messages`, {
      body: {
        text: body.data.text,
        waitMs: SEND_WAIT_MS,
        ...(deadline === undefined ? {} : { deadline }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      },
      idempotencyKey: options.idempotencyKey,
      signal: options.signal,
    });
    return answerTurn(this.#deps.http, this.#path(), response, options.signal);
  }

  /**
   * Posts a user message and yields its turn as it happens: the model's text as the provider
   * streams it (`text-delta`, live and not journaled), each model call's journaled text, tool
   * calls as they start and end, and the final answer (`finish`, last). Like `send`, it follows
   * the journal through reconnections and fail-over, and throws what `send` rejects with. A
   * delta's `call` and `offset` say where it belongs, so nothing is yielded twice.
   */
  async *stream(text: string, options: SendOptions = {}): AsyncGenerator<TurnStreamPart> {
    const { deadline, timeoutMs } = options;
    const body = PostMessageBodySchema.safeParse({ text, deadline, timeoutMs });
    if (!body.success) throw new BrainError("invalid_request", "The message is invalid.", body.error.issues);
    const posted = await this.#deps.http.request("POST", `${this.#path()}/messages`, {
      body: body.data,
      schema: PostMessageResultSchema,
      idempotencyKey: options.idempotencyKey,
      signal: options.signal,
    });
    yield* streamTurn(this.#deps.http, this.#path(), posted.sequence, options.signal);
  }

  /**
   * The session's journal from `after`, in order; with `follow`, including later events. Brain
   * drops a stream whose reader stops reading for BRAIN_STREAM_STALL_MS (30 s by default): an
   * iteration that pauses longer should resume with `after` set to the last sequence it saw.
   */
  events(options: EventsOptions = {}): AsyncIterable<JournalEvent> {
    return this.#stream(options);
  }

  /**
   * Cancels the turn that is running: its open tool calls end `cancelled` (their hosts' signals
   * fire, later results are refused) and its activation ends `cancelled`. Resolves with the
   * sequence of the journaled request; a session with no running turn is unaffected.
   */
  async cancel(): Promise<number> {
    const r = await this.#deps.http.request("POST", `${this.#path()}/cancel`, { schema: CancelTurnResultSchema });
    return r.sequence;
  }

  /**
   * Cancels one tool call, named by the sequence of its tool_call_started record. Resolves with
   * false when the call had already ended: the first terminal cause is kept.
   */
  async cancelCall(sequence: number): Promise<boolean> {
    const r = await this.#deps.http.request("POST", `${this.#path()}/calls/${sequence}/cancel`, {
      schema: CancelCallResultSchema,
    });
    return r.cancelled;
  }

  /**
   * The calls waiting at an approval gate (a tool declared with `approval: "always"`, or one whose
   * approval predicate held the call), in call order: each with the input the model asked for and its hash.
   */
  async approvals(): Promise<PendingApproval[]> {
    const r = await this.#deps.http.request("GET", `${this.#path()}/approvals`, { schema: PendingApprovalListSchema });
    return r.approvals;
  }

  /**
   * Follows the session's approval gates: yields each call waiting for a decision, those waiting
   * now first, then each new one as the model makes it, until the session ends or `signal` aborts.
   * A call decided or ended before it is reached is not yielded.
   */
  async *watchApprovals(options: { signal?: AbortSignal } = {}): AsyncGenerator<PendingApproval> {
    const { signal } = options;
    const fold = new ApprovalFold();
    let last = 0;
    for await (const event of this.#stream({ after: 0, signal })) {
      last = event.sequence;
      fold.note(event);
    }
    yield* [...fold.waiting.values()];
    const seen = new Set(fold.waiting.keys());
    for await (const event of this.#stream({ after: last, follow: true, signal })) {
      const fresh = fold.note(event);
      if (fresh && !seen.has(fresh.call)) {
        seen.add(fresh.call);
        yield fresh;
      }
    }
  }

  /**
   * Approves a waiting call (by the sequence of its tool_call_started), as the model asked or with
   * edited `input`, which must fit the tool's input schema and is journaled beside the original.
   * Rejects with `call_not_waiting` when it was decided already or has ended.
   */
  async approve(call: number, options: { input?: unknown } = {}): Promise<number> {
    const body = options.input === undefined ? {} : { input: options.input };
    const r = await this.#deps.http.request("POST", `${this.#path()}/calls/${call}/approve`, {
      body,
      schema: ApprovalDecisionSchema,
    });
    return r.sequence;
  }

  /** Denies a waiting call: it ends with a `denied` error (with `reason`) that the model reads. */
  async deny(call: number, options: { reason?: string } = {}): Promise<number> {
    const body = options.reason === undefined ? {} : { reason: options.reason };
    const r = await this.#deps.http.request("POST", `${this.#path()}/calls/${call}/deny`, {
      body,
      schema: ApprovalDecisionSchema,
    });
    return r.sequence;
  }

  /** Ends the session (it accepts no more messages) and releases its handlers. */
  async end(): Promise<SessionInfo> {
    this.#info = await this.#releasing(() =>
      this.#deps.http.request("POST", `${this.#path()}/end`, { schema: SessionSchema }),
    );
    return this.#info;
  }

  /** Deletes the session and releases its handlers. */
  async delete(): Promise<void> {
    await this.#releasing(() => this.#deps.http.request("DELETE", this.#path()));
  }

  async *#stream({ after = 0, follow = false, signal }: EventsOptions): AsyncGenerator<JournalEvent> {
    try {
      const response = await this.#deps.http.fetch("GET", `${this.#path()}/events`, {
        query: { after, follow },
        signal,
      });
      if (response.body === null) return;
      for await (const line of ndjsonLines(response.body)) yield parseEvent(line);
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
  }

  /** Runs the request; on success, or when the session is already gone, drops its handlers. */
  async #releasing<T>(request: () => Promise<T>): Promise<T> {
    try {
      const result = await request();
      this.#deps.host.release(this.id);
      return result;
    } catch (err) {
      if (err instanceof BrainError && err.code === "not_found") this.#deps.host.release(this.id);
      throw err;
    }
  }

  #path(): string {
    return `/v1/sessions/${encodeURIComponent(this.id)}`;
  }
}
