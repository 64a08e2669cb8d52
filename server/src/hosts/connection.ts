import {
  BrainError,
  type HostFrame,
  hop,
  type InvokeFrame,
  issuesText,
  MAX_FRAME_BYTES,
  type ServerFrame,
  WireHostFrameSchema,
} from "@aexhq/brain-contracts";
import { endUnknownWhenBack } from "@aexhq/brain-core/calls";
import { isDataException } from "@aexhq/brain-db/connect";
import { type CallKey, type CallRef, callState, checkApproval, endedAmong } from "@aexhq/brain-db/ops";
import { isUnavailable } from "@aexhq/brain-db/writer";
import type { WebSocket } from "ws";
import { toBrainError } from "../plugins/errors.js";
import type { Services } from "../services.js";
import { inputHash } from "./approval-hash.js";
import { applyReport, refuseOversizeResult, toAction } from "./call-reports.js";
import { PartCollector, type PartStep } from "./frame-parts.js";
import type { Invocation } from "./link.js";
import { answerToolRequest, type ToolRequestDeps, type ToolRequestFrame } from "./requests.js";

/** Frames touch the journal, the tables, model calls and Environments; claims go through the dispatcher. */
export type ConnectionDeps = ToolRequestDeps &
  Pick<Services, "availability" | "log" | "dispatch" | "repairs" | "metrics">;

/** Frames that report on a call (the journal transitions of connection and worker alike). */
type CallFrame = Extract<HostFrame, { type: "emit" | "result" | "return" | "finish" }>;

/**
 * One host WebSocket. Frames are validated, then applied to their call in arrival order, each
 * acknowledged only after its journal write has committed.
 */
export class HostConnection {
  private open = true;
  /** Sends the socket's held writes now (routes/host-socket.ts corks them per tick). */
  private readonly flush: (() => void) | null;
  private flushQueued = false;
  private lastFrameAt = Date.now();
  /** Calls sent on this socket and not known to have ended: the ones a cancel frame may concern. */
  private readonly inflight = new Map<string, CallKey>();
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly parts: PartCollector;
  /**
   * The sessions this connection serves when it said it would name them (`?sessions=attached`):
   * only their calls are sent to it. Null: every session of its host (a replica of a named host,
   * or a host that names none).
   */
  private readonly attached: Set<string> | null;
  /** Set when this is a replica of a named host: its calls are claimed by fair share. */
  readonly replicaId: string | null;
  /** The application token that owns the host (null: the operator's): revoking it closes this. */
  readonly ownerTokenId: string | null;

  constructor(
    private readonly rt: ConnectionDeps,
    private readonly socket: WebSocket,
    readonly id: string,
    readonly hostId: string,
    options: { replicaId?: string; attachedOnly?: boolean; flush?: () => void; ownerTokenId?: string | null } = {},
  ) {
    this.flush = options.flush ?? null;
    this.parts = new PartCollector(rt.config.maxEmittedBytes);
    this.replicaId = options.replicaId ?? null;
    this.ownerTokenId = options.ownerTokenId ?? null;
    this.attached = options.attachedOnly && !this.replicaId ? new Set() : null;
  }

  /** Calls sent on this connection whose end it has not seen yet (for metrics). */
  get pendingCalls(): number {
    return this.inflight.size;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Whether a call of this session may be sent here. */
  serves(sessionId: string): boolean {
    return this.attached === null || this.attached.has(sessionId);
  }

  /** The sessions a claim may take calls of: null for all of the host's. */
  servedSessions(): string[] | null {
    return this.attached === null ? null : [...this.attached];
  }

  start(onClose: () => void): void {
    this.socket.on("message", (data, isBinary) => {
      hop("server.frame-received");
      this.lastFrameAt = Date.now();
      const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.byteLength, 0) : data.byteLength;
      if (bytes > MAX_FRAME_BYTES) this.refuseOversize(isBinary ? null : data.toString(), bytes);
      else this.receive(isBinary ? null : data.toString());
    });
    this.socket.on("close", () => {
      this.open = false;
      if (this.heartbeat) clearInterval(this.heartbeat);
      onClose();
    });
    this.socket.on("error", () => this.socket.terminate());
    const hb = this.rt.config.heartbeatMs;
    // A half-open socket sends nothing: drop it after three silent heartbeat periods.
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastFrameAt > 3 * hb) this.socket.terminate();
    }, hb);
    this.heartbeat.unref();
    this.send({ type: "welcome", hostId: this.hostId, connectionId: this.id, heartbeatMs: hb });
  }

  send(frame: ServerFrame): void {
    if (this.open) this.socket.send(JSON.stringify(frame));
  }

  invoke(call: Invocation): void {
    this.inflight.set(`${call.sessionId}:${call.sequence}`, { sessionId: call.sessionId, seq: call.sequence });
    this.send({ type: "invoke", ...call, input: call.input as InvokeFrame["input"] });
    hop("server.invoke-sent");
    // Out as soon as the commit's other invokes are written (they are sent from its `committed`
    // hooks, one after another), not at the end of the tick, behind the commit's bookkeeping.
    if (this.flush && !this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => {
        this.flushQueued = false;
        this.flush?.();
      });
    }
  }

  /**
   * Tells the host about its calls that ended without it (deadline, cancellation, session end):
   * the SDK aborts their signals. Runs when a commit names this host.
   */
  async reconcile(): Promise<void> {
    if (this.inflight.size === 0) return;
    for (const c of await endedAmong(this.rt.sql, [...this.inflight.values()])) {
      this.inflight.delete(`${c.sessionId}:${c.seq}`);
      if (c.status === "timeout" || c.status === "cancelled" || c.status === "unknown") {
        this.send({ type: "cancel", sessionId: c.sessionId, sequence: c.seq, status: c.status });
      }
    }
  }

  /** The session ended or was deleted: its calls are no longer ours to track. */
  release(sessionId: string): void {
    this.attached?.delete(sessionId);
    for (const [key, c] of this.inflight) if (c.sessionId === sessionId) this.inflight.delete(key);
    this.send({ type: "release", sessionId });
  }

  /** Drops the socket without a closing handshake, as a network failure would. */
  terminate(): void {
    this.socket.terminate();
  }

  close(code = 1001, reason = "server shutting down"): void {
    if (this.open) this.socket.close(code, reason);
  }

  /**
   * A frame over the limit breaks the protocol: the host is told why (with the frame's id when it
   * can be read), then the socket closes with 1009. The socket accepts frames up to MAX_BODY_BYTES
   * so that this answer is possible; `ws` closes on anything larger by itself, also with 1009.
   */
  private refuseOversize(text: string | null, bytes: number): void {
    const message = `The frame is ${bytes} bytes; the limit is ${MAX_FRAME_BYTES}.`;
    this.rt.log.warn({ connectionId: this.id, hostId: this.hostId, bytes }, "a host frame over the size limit");
    this.send({ type: "reject", id: extractId(text), error: { code: "frame_too_large", message } });
    this.close(1009, "frame_too_large");
  }

  /** `whole`: the frame was reassembled from parts, and must be the result-bearing frame they named. */
  private receive(text: string | null, whole?: Extract<PartStep, { kind: "whole" }>): void {
    let frame: HostFrame;
    try {
      if (text === null) throw new Error("binary frames are not accepted");
      const parsed = WireHostFrameSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(issuesText(parsed.error));
      frame = parsed.data;
      hop("server.frame-parsed");
      if (whole && !assembledAsNamed(frame, whole.part)) {
        throw new Error("parts must carry one result, return or finish frame of their id, session and sequence");
      }
    } catch (error) {
      const id = whole ? whole.part.id : extractId(text);
      this.send({ type: "reject", id, error: { code: "invalid_frame", message: (error as Error).message } });
      return;
    }
    if (frame.type === "part") {
      this.collect(frame);
      return;
    }
    if (frame.type === "ping") {
      this.send({ type: "pong", id: frame.id });
      return;
    }
    if (frame.type === "attach") {
      void this.attach(frame.id, frame.sessionId);
      return;
    }
    if (frame.type === "approval") {
      void this.checkApproval(frame);
      return;
    }
    if (frame.type === "model" || frame.type === "environment") {
      // Requests run beside the call's frames: a model call may take minutes.
      void this.answer(frame);
      return;
    }
    // No waiting between frames: each is submitted to the journal writer as it arrives, and the
    // writer keeps submission order, so a call's frames commit in the order the host sent them
    // (and a frame after a finish finds the call ended) while several can share one commit.
    void this.apply(frame);
  }

  private collect(part: Extract<HostFrame, { type: "part" }>): void {
    const step = this.parts.add(part);
    if (step.kind === "whole") this.receive(step.text, step);
    else if (step.kind === "over") void this.refuseParts(step.part, step.bytes);
    else if (step.kind === "interleaved") {
      const message = "the parts of two frames were interleaved";
      for (const id of [step.previous, part.id])
        this.send({ type: "reject", id, error: { code: "invalid_frame", message } });
    }
  }

  /** A result past anything the budget admits: the call ends `budget_exceeded` (see refuseOversizeResult). */
  private async refuseParts(part: Extract<HostFrame, { type: "part" }>, bytes: number): Promise<void> {
    try {
      await refuseOversizeResult(
        this.rt,
        { sessionId: part.sessionId, seq: part.sequence, hostId: this.hostId },
        bytes,
      );
      const state = await callState(this.rt.sql, part.sessionId, part.sequence, this.hostId);
      throw new BrainError(state === null ? "call_not_found" : "call_ended");
    } catch (error) {
      if (error instanceof BrainError && error.code === "budget_exceeded")
        this.inflight.delete(`${part.sessionId}:${part.sequence}`);
      this.reject(part.id, error, "host frame failed");
    }
  }

  /** The host serves this session from now on: its pending calls are claimed and sent. */
  private async attach(id: number, sessionId: string): Promise<void> {
    try {
      if (this.attached !== null) {
        this.attached.add(sessionId);
        await this.rt.dispatch.claimFor(this, [sessionId]);
      }
      this.send({ type: "ack", id, sequence: null });
    } catch (error) {
      this.reject(id, error, "attaching a session failed");
    }
  }

  private async answer(frame: ToolRequestFrame): Promise<void> {
    try {
      const answer = await answerToolRequest(this.rt, { hostId: this.hostId }, frame);
      this.send({ type: "ack", id: frame.id, sequence: answer.sequence, value: answer.value as never });
    } catch (error) {
      this.reject(frame.id, error, "host request failed");
    }
  }

  /** A replica reports only on the calls sent to it, not on its sibling replicas' calls. */
  private refOf(frame: { sessionId: string; sequence: number }): CallRef {
    return this.replicaId
      ? { sessionId: frame.sessionId, seq: frame.sequence, connectionId: this.id }
      : { sessionId: frame.sessionId, seq: frame.sequence, hostId: this.hostId };
  }

  /**
   * The answer of the tool's approval predicate: journaled; when a person must decide, the call
   * leaves this connection and waits (see checkApproval). Submitted in arrival order like a report.
   */
  private async checkApproval(frame: Extract<HostFrame, { type: "approval" }>): Promise<void> {
    try {
      const checked = await this.rt.writer.submit(checkApproval(this.refOf(frame), frame.required, inputHash));
      if (checked === null) {
        const state = await callState(this.rt.sql, frame.sessionId, frame.sequence, this.hostId);
        if (state === null) throw new BrainError("call_not_found");
        if (state === "ended") throw new BrainError("call_ended");
        const why = "A predicate's answer is taken once, for a call running on this host that no person has approved.";
        throw new BrainError("invalid_frame", why);
      }
      if (frame.required) this.inflight.delete(`${frame.sessionId}:${frame.sequence}`);
      this.send({ type: "ack", id: frame.id, sequence: checked.sequence });
    } catch (error) {
      // The host has stopped the call to wait for a person, but the database could not take the
      // hold: the call would stay running with nothing running it. It ends `unknown` once the
      // database answers, as a finish the database could not take does.
      if (frame.required && isUnavailable(error))
        endUnknownWhenBack(this.rt.writer, this.rt.repairs, this.refOf(frame));
      this.reject(frame.id, error, "host frame failed");
    }
  }

  private async apply(frame: CallFrame): Promise<void> {
    try {
      const ref = this.refOf(frame);
      const result = await applyReport(this.rt, ref, toAction(frame));
      if (result.seq === null) {
        const state = await callState(this.rt.sql, frame.sessionId, frame.sequence, this.hostId);
        throw new BrainError(state === null ? "call_not_found" : "call_ended");
      }
      if (result.ended) this.inflight.delete(`${frame.sessionId}:${frame.sequence}`);
      this.send({ type: "ack", id: frame.id, sequence: result.seq });
    } catch (error) {
      this.reject(frame.id, error, "host frame failed");
    }
  }

  /**
   * Answers a frame that failed with its documented code; only the unexpected is logged as an error.
   * A Postgres data exception (a value the checks before the write missed) is the frame's fault, not
   * the server's: `unstorable_text`. A connection failure is news that the database went away.
   */
  private reject(id: number, error: unknown, what: string): void {
    this.rt.availability.observe(error);
    const e =
      !(error instanceof BrainError) && isDataException(error)
        ? new BrainError("unstorable_text")
        : toBrainError(error);
    if (e.code === "internal_error") this.rt.log.error({ err: error, connectionId: this.id }, what);
    this.send({ type: "reject", id, error: { code: e.code, message: e.message } });
  }
}

function assembledAsNamed(frame: HostFrame, part: Extract<HostFrame, { type: "part" }>): boolean {
  const carriesResult = frame.type === "result" || frame.type === "return" || frame.type === "finish";
  return (
    carriesResult && frame.id === part.id && frame.sessionId === part.sessionId && frame.sequence === part.sequence
  );
}

function extractId(text: string | null): number | null {
  if (text === null) return null;
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id;
    return typeof id === "number" && Number.isInteger(id) && id >= 0 ? id : null;
  } catch {
    return null;
  }
}
