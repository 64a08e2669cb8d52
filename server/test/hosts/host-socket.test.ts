import { randomUUID } from "node:crypto";
import { MAX_FRAME_BYTES } from "@aexhq/brain-contracts";
import { describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { countRows, createSession, dumpSchemas, expectError, request, sha256 } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import {
  connectHost,
  type HostSocket,
  Refused,
  registerHostOn,
  socketsClosedAfterAll,
} from "../../../testkit/host-sockets.js";

const brain = startedBeforeAll(() => startBrain());
const sockets = socketsClosedAfterAll();

function registerHost(name?: string): Promise<{ id: string; token: string }> {
  return registerHostOn(brain, name);
}

function connect(hostId: string, token: string | null): Promise<HostSocket> {
  return connectHost(brain, hostId, token, sockets);
}

async function refusedWith(hostId: string, token: string | null): Promise<Refused> {
  const error = await connect(hostId, token).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Refused);
  return error as Refused;
}

async function openConnections(hostId: string): Promise<number> {
  const [row] = await brain.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM host_connections WHERE host_id = ${hostId} AND closed_at IS NULL`;
  return row!.n;
}

describe("host registration", () => {
  it("returns { id, token } once and stores only the token's SHA-256", async () => {
    const host = await registerHost("billing");
    expect(host.token.length).toBeGreaterThanOrEqual(32);
    const other = await registerHost();
    expect(other.id).not.toBe(host.id);
    expect(other.token).not.toBe(host.token);

    const [row] = await brain.db.sql<{ name: string; token_hash: Buffer }[]>`
      SELECT name, token_hash FROM hosts WHERE id = ${host.id}`;
    expect(row?.name).toBe("billing");
    expect(row?.token_hash.equals(sha256(host.token))).toBe(true);
    // Connect once, so connection rows exist too, then search every table for the token.
    const socket = await connect(host.id, host.token);
    expect((await socket.next()).type).toBe("welcome");
    const dump = await dumpSchemas(brain.db.sql, ["brain", "brain_boss"]);
    for (const secret of [host.token, other.token]) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(Buffer.from(secret).toString("hex"));
      expect(dump).not.toContain(Buffer.from(secret).toString("base64"));
    }
    socket.ws.close();
    await socket.closed;
  });
});

describe("host socket", () => {
  it("refuses a wrong token with HTTP 401 before the upgrade, and records no connection", async () => {
    const host = await registerHost();
    const other = await registerHost();
    for (const token of [null, "wrong", `${host.token}x`, other.token, brain.token]) {
      const refused = await refusedWith(host.id, token);
      expect(refused.status).toBe(401);
      expectError(
        { status: refused.status, headers: new Headers(), text: refused.body, json: JSON.parse(refused.body) },
        "unauthorized",
      );
    }
    // An unknown host is the same answer as a wrong token; a malformed id is a bad request.
    expect((await refusedWith(randomUUID(), host.token)).status).toBe(401);
    expect((await refusedWith("not-a-uuid", host.token)).status).toBe(400);
    expect(await openConnections(host.id)).toBe(0);
    const [row] = await brain.db.sql`SELECT last_connected_at FROM hosts WHERE id = ${host.id}`;
    expect(row?.last_connected_at).toBeNull();
  });

  it("accepts the right token: the first frame is welcome, and the connection is recorded", async () => {
    const host = await registerHost();
    const socket = await connect(host.id, host.token);
    const welcome = await socket.next();
    expect(welcome).toMatchObject({ type: "welcome", hostId: host.id });
    expect(await openConnections(host.id)).toBe(1);
    socket.ws.send(JSON.stringify({ type: "ping", id: 7 }));
    expect(await socket.next()).toEqual({ type: "pong", id: 7 });
    socket.ws.close();
    await socket.closed;
    await vi.waitFor(async () => expect(await openConnections(host.id)).toBe(0));
  });

  it("rejects invalid frames with invalid_frame, writes nothing, and keeps the socket open", async () => {
    const host = await registerHost();
    const session = await createSession(brain);
    const socket = await connect(host.id, host.token);
    expect((await socket.next()).type).toBe("welcome");
    const before = await countRows(brain.db.sql);
    const cases: [string | Buffer, number | null][] = [
      ["not json", null],
      ["{", null],
      ["[]", null],
      ["null", null],
      [JSON.stringify({ type: "explode", id: 1 }), 1],
      [JSON.stringify({ type: "emit", id: 2 }), 2],
      [JSON.stringify({ type: "ping", id: 3, extra: true }), 3],
      [JSON.stringify({ type: "ping", id: -1 }), null],
      [JSON.stringify({ type: "finish", id: 4, sessionId: "nope", sequence: 1 }), 4],
      [JSON.stringify({ type: "emit", id: 5, sessionId: session.id, sequence: 0, kind: "k", data: 1 }), 5],
      [JSON.stringify({ type: "result", id: 6, sessionId: session.id, sequence: 1, outcome: { status: "maybe" } }), 6],
      [Buffer.from(JSON.stringify({ type: "ping", id: 8 })), null],
      // Data nested 30,000 deep: refused as a frame, not answered internal_error by a reader downstream.
      [
        `{"type":"emit","id":10,"sessionId":"${session.id}","sequence":1,"kind":"k","data":${"[".repeat(30_000)}${"]".repeat(30_000)}}`,
        10,
      ],
      // Exactly at the limit: still a frame, just not a valid one.
      [JSON.stringify({ type: "ping", id: 9, pad: "x".repeat(MAX_FRAME_BYTES - 31) }), 9],
    ];
    expect(Buffer.byteLength(cases.at(-1)![0])).toBe(MAX_FRAME_BYTES);
    for (const [frame, id] of cases) {
      socket.ws.send(frame, { binary: Buffer.isBuffer(frame) });
      const answer = await socket.next();
      expect(answer, String(frame).slice(0, 100)).toMatchObject({
        type: "reject",
        id,
        error: { code: "invalid_frame" },
      });
    }
    // Well-formed frames about calls that do not exist, or kinds that may not be emitted.
    const refusals: [Record<string, unknown>, string][] = [
      [{ type: "emit", id: 20, sessionId: session.id, sequence: 1, kind: "progress", data: {} }, "call_not_found"],
      [{ type: "emit", id: 21, sessionId: session.id, sequence: 1, kind: "user_message", data: {} }, "reserved_kind"],
      [{ type: "emit", id: 22, sessionId: session.id, sequence: 1, kind: "brain.x", data: {} }, "reserved_kind"],
      [{ type: "emit", id: 23, sessionId: session.id, sequence: 1, kind: "Bad Kind", data: {} }, "invalid_kind"],
      [{ type: "finish", id: 24, sessionId: randomUUID(), sequence: 5 }, "call_not_found"],
    ];
    for (const [frame, code] of refusals) {
      socket.ws.send(JSON.stringify(frame));
      expect(await socket.next()).toMatchObject({ type: "reject", id: frame.id, error: { code } });
    }
    expect(await countRows(brain.db.sql)).toEqual(before);
    socket.ws.send(JSON.stringify({ type: "ping", id: 99 }));
    expect(await socket.next()).toEqual({ type: "pong", id: 99 });
    expect(socket.ws.readyState).toBe(WebSocket.OPEN);
    socket.ws.close();
    await socket.closed;
  });

  it("answers a frame over 64 KiB with frame_too_large, closes with 1009, writes nothing, and stays up", async () => {
    const host = await registerHost();
    const socket = await connect(host.id, host.token);
    expect((await socket.next()).type).toBe("welcome");
    const before = await countRows(brain.db.sql);
    const frame = JSON.stringify({ type: "ping", id: 1, pad: "x".repeat(MAX_FRAME_BYTES) });
    socket.ws.send(frame);
    expect(await socket.next()).toMatchObject({ type: "reject", id: 1, error: { code: "frame_too_large" } });
    expect(await socket.closed).toEqual({ code: 1009, reason: "frame_too_large" });
    expect(await countRows(brain.db.sql)).toEqual(before);
    await vi.waitFor(async () => expect(await openConnections(host.id)).toBe(0));

    expect((await request(brain, "GET", "/healthz", { token: null })).status).toBe(200);
    const again = await connect(host.id, host.token);
    expect((await again.next()).type).toBe("welcome");
    again.ws.send(JSON.stringify({ type: "ping", id: 2 }));
    expect(await again.next()).toEqual({ type: "pong", id: 2 });
    again.ws.close();
    await again.closed;
  });
});
