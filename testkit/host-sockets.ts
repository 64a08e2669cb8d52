// Raw application-host WebSockets for tests that speak the frame protocol themselves.
import { RegisteredHostSchema, type ServerFrame, ServerFrameSchema } from "@aexhq/brain-contracts";
import { afterAll, expect } from "vitest";
import WebSocket from "ws";
import { request, type Target } from "./api.js";

/**
 * A list for connectHost to collect sockets in, every one terminated after the file's tests
 * (declared after the server's fixture, so the sockets go before the server closes).
 */
export function socketsClosedAfterAll(): WebSocket[] {
  const sockets: WebSocket[] = [];
  afterAll(() => {
    for (const ws of sockets.splice(0)) ws.terminate();
  });
  return sockets;
}

/** Registers an application host; its token is shown once. */
export async function registerHostOn(target: Target, name?: string): Promise<{ id: string; token: string }> {
  const answer = await request(target, "POST", "/v1/hosts", { body: name ? { name } : {} });
  expect(answer.status).toBe(201);
  return RegisteredHostSchema.parse(answer.json);
}

export interface HostSocket {
  ws: WebSocket;
  /** The next server frame not read yet. */
  next(): Promise<ServerFrame>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a host socket; resolves once it is open, rejects with the HTTP answer if refused. */
export function connectHost(
  target: Target,
  hostId: string,
  token: string | null,
  /** Collects the socket, for the caller to terminate after its tests. */
  sockets: WebSocket[] = [],
): Promise<HostSocket> {
  const url = `${target.url.replace(/^http/, "ws")}/v1/hosts/${hostId}/connect`;
  const ws = new WebSocket(url, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  sockets.push(ws);
  const frames: ServerFrame[] = [];
  const waiting: ((frame: ServerFrame) => void)[] = [];
  ws.on("message", (data) => {
    const frame = ServerFrameSchema.parse(JSON.parse(data.toString()));
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else frames.push(frame);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const next = () =>
    new Promise<ServerFrame>((resolve, reject) => {
      const ready = frames.shift();
      if (ready) return resolve(ready);
      const timer = setTimeout(() => reject(new Error("no frame within 10 s")), 10_000);
      waiting.push((frame) => {
        clearTimeout(timer);
        resolve(frame);
      });
    });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, next, closed }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk;
      });
      res.on("end", () => reject(new Refused(res.statusCode ?? 0, body)));
    });
    ws.once("error", (error) => reject(error));
  });
}

export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`refused with ${status}: ${body}`);
  }
}
