// The part protocol on a raw host socket: parts reassemble only into the result-bearing frame
// they name; anything else is invalid_frame (for every id involved), writes nothing, and the
// socket carries on.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { countRows } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { connectHost, type HostSocket, registerHostOn, socketsClosedAfterAll } from "../../../testkit/host-sockets.js";

const brain = startedBeforeAll(() => startBrain());
const sockets = socketsClosedAfterAll();

async function welcomed(): Promise<HostSocket> {
  const host = await registerHostOn(brain);
  const socket = await connectHost(brain, host.id, host.token, sockets);
  expect((await socket.next()).type).toBe("welcome");
  return socket;
}

const call = { sessionId: randomUUID(), sequence: 3 };

function parts(id: number, text: string, pieces = 3): string[] {
  const size = Math.ceil(text.length / pieces);
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) {
    const data = text.slice(at, at + size);
    out.push(JSON.stringify({ type: "part", id, ...call, data, last: at + size >= text.length }));
  }
  return out;
}

describe("part frames", () => {
  it("that reassemble into a control frame, or a frame of another id or call, are invalid_frame", async () => {
    const socket = await welcomed();
    const before = await countRows(brain.db.sql);
    const emit = JSON.stringify({ type: "emit", id: 1, ...call, kind: "k", data: "x".repeat(100) });
    const otherId = JSON.stringify({ type: "finish", id: 99, ...call });
    const otherCall = JSON.stringify({ type: "finish", id: 3, ...call, sequence: 4 });
    for (const [id, text] of [
      [1, emit],
      [2, otherId],
      [3, otherCall],
      [4, "{not json"],
    ] as const) {
      for (const p of parts(id, text)) socket.ws.send(p);
      expect(await socket.next()).toMatchObject({ type: "reject", id, error: { code: "invalid_frame" } });
    }
    expect(await countRows(brain.db.sql)).toEqual(before);
    socket.ws.send(JSON.stringify({ type: "ping", id: 5 }));
    expect(await socket.next()).toEqual({ type: "pong", id: 5 });
  });

  it("interleaved with another frame's parts: both are refused", async () => {
    const socket = await welcomed();
    const [first] = parts(1, JSON.stringify({ type: "finish", id: 1, ...call }));
    const [second] = parts(2, JSON.stringify({ type: "finish", id: 2, ...call }));
    socket.ws.send(first!);
    socket.ws.send(second!);
    const answers = [await socket.next(), await socket.next()];
    expect(answers).toEqual([
      expect.objectContaining({ type: "reject", id: 1, error: expect.objectContaining({ code: "invalid_frame" }) }),
      expect.objectContaining({ type: "reject", id: 2, error: expect.objectContaining({ code: "invalid_frame" }) }),
    ]);
  });

  it("that name a call this host does not have, reassembled, are call_not_found", async () => {
    const socket = await welcomed();
    const finish = JSON.stringify({ type: "finish", id: 7, ...call, outcome: { status: "ok", value: "v" } });
    for (const p of parts(7, finish)) socket.ws.send(p);
    expect(await socket.next()).toMatchObject({ type: "reject", id: 7, error: { code: "call_not_found" } });
  });
});
