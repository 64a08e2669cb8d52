import WebSocket from "ws";
import { Backoff } from "./backoff.js";
import {
  BrainError,
  ErrorBodySchema,
  hop,
  isErrorCode,
  MAX_FRAME_BYTES,
  type ServerFrame,
  WireServerFrameSchema,
} from "./contracts.js";
import { Dispatcher } from "./dispatcher.js";
import type { FrameChannel } from "./execution.js";
import { type CallFrame, encodeFrameParts, type RequestFrame } from "./frame-encoding.js";
import { type Heartbeat, startHeartbeat } from "./heartbeat.js";
import type { HostEndpoint, HostIdentity } from "./host-identity.js";
import { openHostSocket } from "./host-socket.js";
import type { HttpClient } from "./http-client.js";
import { type Ack, PendingAcks } from "./pending-acks.js";
import type { PlacedTool } from "./tool.js";

export type { BrainCredentials, HostEndpoint, HostIdentity } from "./host-identity.js";

const WELCOME_TIMEOUT_MS = 10_000;
const CLOSE_TIMEOUT_MS = 2_000;

/**
 * The one WebSocket a Brain client keeps to its host endpoint, shared by all its sessions.
 * Lifecycle: register the host lazily (unless credentials were given) → connect → wait for
 * `welcome` → heartbeat. When a welcomed connection is lost, every in-flight call is interrupted
 * (Brain records `unknown` for them), every unanswered frame fails with `connection_closed`, and
 * the same host reconnects with backoff; nothing is ever re-sent.
 */
export class HostConnection implements FrameChannel {
  readonly dispatcher: Dispatcher;
  private registering: Promise<HostEndpoint> | undefined;
  private firstConnect: Promise<void> | undefined;
  private everConnected = false;
  /** The welcomed socket frames are sent on; undefined while connecting or disconnected. */
  private socket: WebSocket | undefined;
  /** The socket being opened or open, welcomed or not. */
  private current: WebSocket | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly backoff = new Backoff();
  private readonly acks = new PendingAcks();
  /** Request ids increase for the client's lifetime, across reconnections. */
  private nextId = 1;

  constructor(
    private readonly http: HttpClient,
    readonly identity: HostIdentity,
  ) {
    // A replica routes by tool name alone: it serves every session placed in its named host.
    this.dispatcher = new Dispatcher(this, !identity.namesSessions);
  }

  /** The host's id once registered (or given). */
  hostId(): string | undefined {
    return this.identity.current()?.hostId;
  }

  /**
   * Serves a session's tools from now on. Brain is told (an attach frame) when the connection is
   * up, and again after each reconnection; until then the session's calls wait for it.
   */
  attach(sessionId: string, tools: readonly PlacedTool[]): void {
    this.dispatcher.attach(sessionId, tools);
    this.announce(sessionId);
  }

  /** Drops a session's handlers (ended, deleted, or a failed reattachment). */
  release(sessionId: string): void {
    this.dispatcher.release(sessionId);
  }

  private announce(sessionId: string): void {
    if (!this.identity.namesSessions || this.socket === undefined) return;
    try {
      // Not awaited: a lost ack costs nothing, the next connection attaches the session again.
      this.write({ type: "attach", sessionId }).catch(() => {});
    } catch {
      // Not connected: the session is attached when the connection is welcomed.
    }
  }

  /**
   * Registers the host if needed and, the first time, connects and waits for the welcome (a
   * failure rejects and the next call tries again). Once a connection has been welcomed, a lost
   * one is re-established in the background and this does not wait for it.
   */
  async ensure(): Promise<HostEndpoint> {
    this.assertOpen();
    const endpoint = await this.register();
    if (!this.everConnected) {
      this.firstConnect ??= this.open(endpoint).finally(() => {
        this.firstConnect = undefined;
      });
      await this.firstConnect;
    }
    this.assertOpen();
    return endpoint;
  }

  send(frame: CallFrame): Promise<number | null> {
    return this.write(frame).then((ack) => ack.sequence);
  }

  /** A request frame (model, environment): resolves with its ack, which carries the answer. */
  request(frame: RequestFrame): Promise<Ack> {
    return this.write(frame);
  }

  private write(frame: CallFrame | RequestFrame): Promise<Ack> {
    const ws = this.socket;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) {
      throw new BrainError("not_connected", "The host connection is down; the frame was not sent.");
    }
    const id = this.nextId++;
    const texts = encodeFrameParts(frame, id);
    const ack = this.acks.add(id);
    // A large result goes out as parts, back to back: nothing else is written between them.
    for (const text of texts) ws.send(text);
    hop("sdk.frame-sent");
    return ack;
  }

  /** Closes the socket, stops reconnecting, interrupts in-flight calls and drops all handlers. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.dispatcher.releaseAll();
    const ws = this.current;
    if (ws === undefined || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once("close", () => resolve());
      setTimeout(() => ws.terminate(), CLOSE_TIMEOUT_MS).unref();
      ws.close(1000, "client closed");
    });
  }

  private register(): Promise<HostEndpoint> {
    const known = this.identity.current();
    if (known !== undefined) return Promise.resolve(known);
    this.registering ??= this.identity.register().finally(() => {
      this.registering = undefined;
    });
    return this.registering;
  }

  /** Opens one socket; resolves on `welcome`, rejects if it closes first. */
  private open(endpoint: HostEndpoint): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      const url = `${webSocketBase(this.http.baseUrl)}${endpoint.path}`;
      const ws = openHostSocket(url, endpoint.token, WELCOME_TIMEOUT_MS);
      this.current = ws;
      let welcomed = false;
      let failure: BrainError | undefined;
      let heartbeat: Heartbeat | undefined;
      const welcomeTimer = setTimeout(() => {
        failure ??= new BrainError("not_connected", "Brain did not welcome the host connection in time.");
        ws.terminate();
      }, WELCOME_TIMEOUT_MS);

      ws.on("unexpected-response", (_request, response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          // An error body is small; anything past one frame's worth is not worth reading.
          if (size < MAX_FRAME_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        response.on("error", () => ws.terminate());
        response.on("end", () => {
          failure = handshakeError(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"));
          ws.terminate();
        });
      });
      ws.on("error", (err) => {
        failure ??= new BrainError("not_connected", `The host connection failed: ${err.message}`);
      });
      ws.on("message", (data) => {
        hop("sdk.frame-received");
        heartbeat?.alive();
        const frame = parseServerFrame(data);
        if (frame === undefined) return;
        if (welcomed) {
          this.route(frame);
          return;
        }
        if (frame.type !== "welcome") return;
        if (frame.hostId !== endpoint.hostId) {
          failure = new BrainError("not_connected", "Brain welcomed a different host id.");
          ws.terminate();
          return;
        }
        welcomed = true;
        clearTimeout(welcomeTimer);
        this.socket = ws;
        this.everConnected = true;
        this.backoff.reset();
        heartbeat = startHeartbeat(ws, frame.heartbeatMs, () => this.nextId++);
        for (const sessionId of this.dispatcher.sessionIds()) this.announce(sessionId);
        resolve();
      });
      ws.on("close", () => {
        clearTimeout(welcomeTimer);
        heartbeat?.stop();
        if (this.current === ws) this.current = undefined;
        if (this.socket === ws) this.socket = undefined;
        if (welcomed) {
          // Abort handlers first, so one awaiting an ack sees its signal aborted when the ack fails.
          this.dispatcher.interruptAll("unknown");
          this.acks.rejectAll();
        } else {
          reject(failure ?? new BrainError("not_connected", "The host connection closed before Brain welcomed it."));
        }
        if (this.everConnected) this.scheduleReconnect();
      });
    });
  }

  private route(frame: ServerFrame): void {
    switch (frame.type) {
      case "ack":
        this.acks.ack(frame.id, frame.sequence, frame.value);
        break;
      case "reject":
        // A reject without an id answers a frame Brain could not read; no promise waits for it.
        if (frame.id !== null) this.acks.reject(frame.id, frame.error);
        break;
      case "invoke":
        this.dispatcher.invoke(frame);
        break;
      case "cancel":
        this.dispatcher.cancel(frame);
        break;
      case "release":
        this.dispatcher.release(frame.sessionId);
        break;
      case "pong":
      case "welcome":
        break;
    }
  }

  private scheduleReconnect(): void {
    const endpoint = this.identity.current();
    if (this.closed || this.reconnectTimer !== undefined || endpoint === undefined) return;
    // Not unref'd: the client keeps its host available until brain.close().
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      // A failed attempt closes its socket, and that close schedules the next attempt.
      this.open(endpoint).catch(() => {});
    }, this.backoff.next());
  }

  private assertOpen(): void {
    if (this.closed) throw closedError();
  }
}

function closedError(): BrainError {
  return new BrainError("not_connected", "This Brain client is closed.");
}

function webSocketBase(httpBase: string): string {
  return httpBase.replace(/^http(s?):/i, "ws$1:");
}

function parseServerFrame(data: WebSocket.RawData): ServerFrame | undefined {
  const buffer = Array.isArray(data)
    ? Buffer.concat(data)
    : Buffer.isBuffer(data)
      ? data
      : Buffer.from(new Uint8Array(data));
  let json: unknown;
  try {
    json = JSON.parse(buffer.toString("utf8"));
  } catch {
    return undefined;
  }
  const parsed = WireServerFrameSchema.safeParse(json);
  // An unreadable frame cannot be answered (Brain takes no rejects); it is dropped.
  if (!parsed.success) return undefined;
  hop("sdk.frame-parsed");
  return parsed.data;
}

function handshakeError(status: number, body: string): BrainError {
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(body));
    if (parsed.success && isErrorCode(parsed.data.error.code)) {
      return new BrainError(parsed.data.error.code, parsed.data.error.message, parsed.data.error.details);
    }
  } catch {
    // Not JSON: fall through to the status.
  }
  return new BrainError("not_connected", `Brain refused the host connection: HTTP ${status}.`, { status });
}
