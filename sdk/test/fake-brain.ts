import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HostFrame, ServerFrame } from "@aexhq/brain-contracts";
import { type WebSocket, WebSocketServer } from "ws";

type Received = HostFrame & { connection: number };

/**
 * An in-process stand-in for the Brain server: just enough HTTP and WebSocket protocol to drive
 * the SDK's client, host connection and dispatcher. It acks every frame (or rejects those the test
 * asks it to) and records what it received.
 */
export class FakeBrain {
  readonly token = "operator-token";
  readonly hostId = randomUUID();
  readonly hostToken = "host-token";
  heartbeatMs = 5_000;
  answerPings = true;
  /** Frame kinds the server rejects with budget_exceeded. */
  rejectKinds = new Set<string>();
  readonly frames: Received[] = [];
  readonly requests: { method: string; path: string; body: unknown; headers: IncomingMessage["headers"] }[] = [];
  readonly connections: { socket: WebSocket; authorization: string | undefined }[] = [];
  url = "";
  private sequence = 100;
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly listeners = new Set<() => void>();

  constructor() {
    this.http = createServer((req, res) => void this.handle(req, res));
    this.http.on("upgrade", (req, socket, head) => {
      const match = /^\/v1\/hosts\/([^/]+)\/connect$/.exec(req.url ?? "");
      if (match?.[1] !== this.hostId || req.headers.authorization !== `Bearer ${this.hostToken}`) {
        socket.end(
          'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\r\n{"error":{"code":"unauthorized","message":"bad host token"}}',
        );
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.http.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const { socket } of this.connections) socket.terminate();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** The latest connection's socket. */
  get socket(): WebSocket {
    const last = this.connections.at(-1);
    if (last === undefined) throw new Error("no host connection yet");
    return last.socket;
  }

  send(frame: ServerFrame): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** Resolves once `predicate` holds (checked whenever a frame or connection arrives). */
  async until<T>(predicate: () => T | undefined | false, timeoutMs = 3_000): Promise<T> {
    const now = predicate();
    if (now) return now;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error("FakeBrain.until timed out"));
      }, timeoutMs);
      const check = (): void => {
        const value = predicate();
        if (!value) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(value);
      };
      this.listeners.add(check);
    });
  }

  framesOf(type: HostFrame["type"]): Received[] {
    return this.frames.filter((frame) => frame.type === type);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private accept(ws: WebSocket, req: IncomingMessage): void {
    const connection = this.connections.length + 1;
    this.connections.push({ socket: ws, authorization: req.headers.authorization });
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as HostFrame;
      this.frames.push({ ...frame, connection });
      if (frame.type === "ping") {
        if (this.answerPings) ws.send(JSON.stringify({ type: "pong", id: frame.id }));
      } else if (frame.type === "emit" && this.rejectKinds.has(frame.kind)) {
        ws.send(JSON.stringify({ type: "reject", id: frame.id, error: { code: "budget_exceeded", message: "over" } }));
      } else {
        ws.send(JSON.stringify({ type: "ack", id: frame.id, sequence: this.sequence++ }));
      }
      this.notify();
    });
    ws.send(
      JSON.stringify({
        type: "welcome",
        hostId: this.hostId,
        connectionId: randomUUID(),
        heartbeatMs: this.heartbeatMs,
      }),
    );
    this.notify();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body: unknown = text === "" ? undefined : JSON.parse(text);
    const url = new URL(req.url ?? "/", "http://x");
    this.requests.push({ method: req.method ?? "", path: url.pathname + url.search, body, headers: req.headers });
    const reply = (status: number, json?: unknown): void => {
      res.writeHead(status, json === undefined ? {} : { "content-type": "application/json" });
      res.end(json === undefined ? undefined : JSON.stringify(json));
    };
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return reply(401, { error: { code: "unauthorized", message: "Missing or invalid bearer token." } });
    }
    const route = `${req.method} ${url.pathname}`;
    const sessionPath = /^\/v1\/sessions\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (route === "POST /v1/hosts") return reply(201, { id: this.hostId, token: this.hostToken });
    if (route === "POST /v1/sessions") {
      const { tools, hostId } = body as { tools: { name: string }[]; hostId?: string };
      return reply(
        201,
        session(
          randomUUID(),
          hostId ?? null,
          tools.map((t) => t.name),
        ),
      );
    }
    if (route === "GET /v1/sessions")
      return reply(200, { sessions: [session(randomUUID(), null, [])], nextCursor: null });
    if (sessionPath !== null) {
      const [, id = "", rest = ""] = sessionPath;
      if (id === "00000000-0000-4000-8000-000000000000") {
        return reply(404, { error: { code: "not_found", message: "No such resource." } });
      }
      if (req.method === "GET" && rest === "") return reply(200, session(id, this.hostId, ["lookup"]));
      if (req.method === "POST" && rest === "/messages") {
        return reply(200, { sequence: 5, activation: { sequence: 6, status: "completed", text: "the answer" } });
      }
      if (req.method === "POST" && rest === "/end") return reply(200, { ...session(id, null, []), status: "ended" });
      if (req.method === "DELETE" && rest === "") return reply(204);
      if (req.method === "GET" && rest === "/events") {
        res.writeHead(200, { "content-type": "application/x-ndjson" });
        const after = Number(url.searchParams.get("after"));
        for (let seq = after + 1; seq <= 3; seq++) {
          const line = `${JSON.stringify({ sequence: seq, kind: "user_message", payload: { text: "é" }, createdAt: "t" })}\n`;
          // Split each line in two writes to exercise the streaming splitter.
          res.write(line.slice(0, 10));
          res.write(line.slice(10));
        }
        res.end();
        return;
      }
    }
    reply(404, { error: { code: "not_found", message: "No such resource." } });
  }
}

function session(id: string, hostId: string | null, tools: string[]) {
  return {
    id,
    status: "active",
    hostId,
    tools,
    lastSequence: 1,
    metadata: {},
    createdAt: new Date().toISOString(),
    endedAt: null,
  };
}
