// The `environment` frame on a raw host socket: only the call's own host, only while the call is
// open; the ack carries the answer and the sequence of its environment_operation record; refusals
// after that check are journaled, the check's own refusals are not.
import {
  ENVIRONMENT_OPERATIONS,
  RegisteredHostSchema,
  type ServerFrame,
  ServerFrameSchema,
} from "@aexhq/brain-contracts";
import { afterAll, expect, it } from "vitest";
import WebSocket from "ws";
import { activationEnded, createSession, hostTool, postMessage, request } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { SECRET_TOKEN } from "./environments-support.js";

const brain = startedBeforeAll(() => startBrain());
const sockets: WebSocket[] = [];
// Before the server closes (after-hooks run in reverse order).
afterAll(() => {
  for (const ws of sockets) ws.terminate();
});

interface HostSocket {
  send(frame: object): void;
  next(): Promise<ServerFrame>;
}

async function host(): Promise<{ id: string; socket: HostSocket }> {
  const answer = await request(brain, "POST", "/v1/hosts", { body: {} });
  const { id, token } = RegisteredHostSchema.parse(answer.json);
  const ws = new WebSocket(`${brain.url.replace(/^http/, "ws")}/v1/hosts/${id}/connect`, {
    headers: { authorization: `Bearer ${token}` },
  });
  sockets.push(ws);
  const frames: ServerFrame[] = [];
  const waiting: ((f: ServerFrame) => void)[] = [];
  ws.on("message", (data) => {
    const frame = ServerFrameSchema.parse(JSON.parse(data.toString()));
    if (frame.type === "pong") return;
    const w = waiting.shift();
    if (w) w(frame);
    else frames.push(frame);
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const socket = {
    send: (frame: object) => ws.send(JSON.stringify(frame)),
    next: () =>
      new Promise<ServerFrame>((resolve, reject) => {
        const ready = frames.shift();
        if (ready) return resolve(ready);
        const timer = setTimeout(() => reject(new Error("no frame within 10 s")), 10_000);
        waiting.push((f) => {
          clearTimeout(timer);
          resolve(f);
        });
      }),
  };
  expect((await socket.next()).type).toBe("welcome");
  return { id, socket };
}

async function operations(sessionId: string) {
  return brain.db.sql<
    { seq: number; payload: { operation: string; outcome: { status: string; error?: { code: string } } } }[]
  >`
    SELECT seq, payload FROM brain.journal WHERE session_id = ${sessionId} AND kind = 'environment_operation' ORDER BY seq`;
}

it("answers only the call's own host while the call is open, with the record's sequence", async () => {
  const owner = await host();
  const stranger = await host();
  const session = await createSession(brain, {
    hostId: owner.id,
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "admin", input: {} }] }, { text: "done" }] },
    tools: [hostTool("admin")],
    environments: [
      { type: "http", name: "github", baseUrl: "http://127.0.0.1:9", headers: { authorization: SECRET_TOKEN } },
    ],
    environmentControl: { operations: [...ENVIRONMENT_OPERATIONS] },
  });
  const message = await postMessage(brain, session.id, "go");
  const invoke = await owner.socket.next();
  if (invoke.type !== "invoke") throw new Error(`expected an invoke, got ${invoke.type}`);
  const call = { sessionId: session.id, sequence: invoke.sequence };

  owner.socket.send({ type: "environment", id: 1, ...call, operation: "get", name: "github" });
  const ack = await owner.socket.next();
  expect(ack).toMatchObject({
    type: "ack",
    id: 1,
    value: { name: "github", headerNames: ["authorization"], status: "ready" },
  });
  expect(JSON.stringify(ack)).not.toContain(SECRET_TOKEN);
  const [record] = await operations(session.id);
  expect(ack.type === "ack" && ack.sequence).toBe(record!.seq);

  // Not its call: refused before anything is journaled.
  stranger.socket.send({ type: "environment", id: 2, ...call, operation: "list" });
  expect(await stranger.socket.next()).toMatchObject({ type: "reject", id: 2, error: { code: "call_not_found" } });

  // Authenticated but malformed: refused and journaled.
  owner.socket.send({
    type: "environment",
    id: 3,
    ...call,
    operation: "update",
    name: "github",
    params: { baseUrl: "ftp://x" },
  });
  expect(await owner.socket.next()).toMatchObject({ type: "reject", id: 3, error: { code: "invalid_request" } });

  owner.socket.send({ type: "finish", id: 4, ...call });
  expect(await owner.socket.next()).toMatchObject({ type: "ack", id: 4 });
  owner.socket.send({ type: "environment", id: 5, ...call, operation: "list" });
  expect(await owner.socket.next()).toMatchObject({ type: "reject", id: 5, error: { code: "call_ended" } });

  expect((await operations(session.id)).map((r) => [r.payload.operation, r.payload.outcome.error?.code])).toEqual([
    ["get", undefined],
    ["update", "invalid_request"],
  ]);
  await activationEnded(brain.db.sql, session.id, message.sequence);
});
