import { randomUUID } from "node:crypto";
import { PostMessageResultSchema, type Session, SessionListSchema, SessionSchema } from "@aexhq/brain-contracts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  countRows,
  createSession,
  dumpSchemas,
  expectError,
  postMessage,
  request,
  sha256,
} from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { orphanRows, sessionRows } from "../../../testkit/orphans.js";
import { scripted } from "../../../testkit/turns.js";
import { within } from "../../../testkit/wait.js";

let brain: InProcessBrain;

beforeAll(async () => {
  brain = await startBrain();
});
afterAll(async () => {
  await brain?.close();
});

async function journal(sessionId: string) {
  return brain.db.sql<{ seq: number; kind: string; payload: Record<string, unknown> }[]>`
    SELECT seq::int AS seq, kind, payload FROM records WHERE session_id = ${sessionId} ORDER BY seq`;
}

async function userMessages(sessionId: string): Promise<number> {
  const [row] = await brain.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM records WHERE session_id = ${sessionId} AND kind = 'user_message'`;
  return row!.n;
}

/** A host that never connects, and a session whose first activation calls its tool: it stays open. */
async function sessionWithPendingTool(): Promise<Session> {
  const host = await request(brain, "POST", "/v1/hosts", { body: { name: "absent" } });
  expect(host.status).toBe(201);
  const { id: hostId } = host.json as { id: string };
  return createSession(brain, {
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "1" } }] }] },
    hostId,
    tools: [
      {
        name: "lookup",
        description: "Looks up one record.",
        inputSchema: { type: "object" },
        outputSchema: null,
        env: { type: "host", name: "app" },
      },
    ],
  });
}

describe("authentication", () => {
  it("answers /healthz without a token", async () => {
    const answer = await request(brain, "GET", "/healthz", { token: null });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ status: "ok" });
  });

  it("refuses every /v1 route without the operator token, and processes nothing", async () => {
    const session = await createSession(brain);
    const host = await request(brain, "POST", "/v1/hosts", { body: {} });
    const hostToken = (host.json as { token: string }).token;
    const routes: [string, string, unknown?][] = [
      ["POST", "/v1/hosts", { name: "intruder" }],
      ["POST", "/v1/sessions", { model: scripted("hi") }],
      ["GET", "/v1/sessions"],
      ["GET", `/v1/sessions/${session.id}`],
      ["POST", `/v1/sessions/${session.id}/end`],
      ["DELETE", `/v1/sessions/${session.id}`],
      ["POST", `/v1/sessions/${session.id}/messages`, { text: "hello" }],
      ["GET", `/v1/sessions/${session.id}/events?after=0`],
    ];
    const wrong: { token: string | null; headers?: Record<string, string> }[] = [
      { token: null },
      { token: "not-the-token-at-all" },
      { token: `${brain.token}x` },
      { token: brain.token.slice(0, -1) },
      { token: hostToken },
      { token: null, headers: { authorization: `Basic ${brain.token}` } },
      { token: null, headers: { authorization: brain.token } },
      { token: "x".repeat(4096) },
    ];
    const before = await countRows(brain.db.sql);
    for (const [method, path, body] of routes) {
      for (const auth of wrong) {
        const answer = await request(brain, method, path, { body, ...auth });
        expect(answer.status, `${method} ${path}`).toBe(401);
        expectError(answer, "unauthorized");
        // The event stream would answer NDJSON; a 401 is a JSON error body.
        expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      }
    }
    // Authentication comes before the body is even parsed: a broken body still gets 401.
    for (const path of ["/v1/sessions", `/v1/sessions/${session.id}/messages`, "/v1/hosts"]) {
      for (const [raw, contentType] of [
        ['{"model":', "application/json"],
        ["text=hi", "application/x-www-form-urlencoded"],
        [JSON.stringify({ text: "a".repeat(2 * 1024 * 1024) }), "application/json"],
      ] as const) {
        const answer = await request(brain, "POST", path, { raw, contentType, token: "wrong" });
        expectError(answer, "unauthorized");
      }
    }
    expect(await countRows(brain.db.sql)).toEqual(before);
    const after = await request(brain, "GET", `/v1/sessions/${session.id}`);
    expect(after.status).toBe(200);
    expect((after.json as Session).status).toBe("active");
    expect((after.json as Session).lastSequence).toBe(1);
  });
});

describe("sessions", () => {
  it("creates a session with its session_created record at sequence 1, and gets it", async () => {
    const created = await request(brain, "POST", "/v1/sessions", {
      body: { model: scripted("hi"), metadata: { customer: "42" } },
    });
    expect(created.status).toBe(201);
    const session = SessionSchema.parse(created.json);
    expect(session).toMatchObject({ status: "active", lastSequence: 1, hostId: null, tools: [], endedAt: null });
    expect(session.metadata).toEqual({ customer: "42" });
    const records = await journal(session.id);
    expect(records.map((r) => [r.seq, r.kind])).toEqual([[1, "session_created"]]);
    expect(records[0]!.payload).toMatchObject({ model: { provider: "scripted" }, tools: [], hostId: null });

    const got = await request(brain, "GET", `/v1/sessions/${session.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(session);
    expectError(await request(brain, "GET", `/v1/sessions/${randomUUID()}`), "not_found");
  });

  it("gives a new session a UUIDv7 id of its creation time, whose rows land in that week's partition", async () => {
    const before = Date.now();
    const session = await createSession(brain);
    const after = Date.now();
    // RFC 9562: version 7, variant 10, the first 48 bits the creation time in ms.
    expect(session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const at = Number.parseInt(session.id.replaceAll("-", "").slice(0, 12), 16);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    // Partitions are weeks counted from the epoch (a Thursday), named by their first day.
    const week = new Date(Math.floor(at / 604_800_000) * 604_800_000).toISOString().slice(0, 10).replaceAll("-", "");
    const [row] = await brain.db.sql<{ partition: string }[]>`
      SELECT tableoid::regclass::text AS partition FROM records WHERE session_id = ${session.id} AND seq = 1`;
    // On a Citus cluster the row is read from that partition's shard: records_w<week>_<shard>.
    expect(row?.partition).toMatch(new RegExp(`(^|\\.)records_w${week}(_\\d+)?$`));
  });

  it("lists newest first, and limit + nextCursor walk every session exactly once", async () => {
    // Concurrent creations share group-commit transactions, so many rows share one created_at.
    await Promise.all(Array.from({ length: 30 }, () => createSession(brain)));
    const expected = await brain.db.sql<{ id: string }[]>`SELECT id FROM sessions ORDER BY created_at DESC, id DESC`;
    for (const limit of [1, 2, 7, 200]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `?limit=${limit}&cursor=${encodeURIComponent(cursor)}` : `?limit=${limit}`;
        const answer = await request(brain, "GET", `/v1/sessions${query}`);
        expect(answer.status, answer.text).toBe(200);
        const page = SessionListSchema.parse(answer.json);
        expect(page.sessions.length).toBeLessThanOrEqual(limit);
        seen.push(...page.sessions.map((s) => s.id));
        cursor = page.nextCursor;
        pages++;
        expect(pages).toBeLessThanOrEqual(expected.length + 1);
      } while (cursor);
      expect(seen, `limit ${limit}`).toEqual(expected.map((r) => r.id));
    }
    const first = SessionListSchema.parse((await request(brain, "GET", "/v1/sessions")).json);
    const times = first.sessions.map((s) => Date.parse(s.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it("ends a session: status ended, a session_ended record, and no more messages", async () => {
    const session = await createSession(brain);
    await postMessage(brain, session.id, "before the end", { wait: true });
    const ended = await request(brain, "POST", `/v1/sessions/${session.id}/end`);
    expect(ended.status).toBe(200);
    const body = SessionSchema.parse(ended.json);
    expect(body.status).toBe("ended");
    expect(body.endedAt).not.toBeNull();
    const records = await journal(session.id);
    const last = records.at(-1)!;
    expect(last.kind).toBe("session_ended");
    expect(body.lastSequence).toBe(last.seq);
    expect(records.filter((r) => r.kind === "session_ended")).toHaveLength(1);

    const before = await countRows(brain.db.sql);
    expectError(
      await request(brain, "POST", `/v1/sessions/${session.id}/messages`, { body: { text: "hi" } }),
      "session_ended",
    );
    const keyed = await request(brain, "POST", `/v1/sessions/${session.id}/messages`, {
      body: { text: "hi" },
      headers: { "idempotency-key": "after-end" },
    });
    expectError(keyed, "session_ended");
    expect(await countRows(brain.db.sql)).toEqual(before);

    // Ending again changes nothing.
    const again = await request(brain, "POST", `/v1/sessions/${session.id}/end`);
    expect(again.status).toBe(200);
    expect((await journal(session.id)).filter((r) => r.kind === "session_ended")).toHaveLength(1);
    expectError(await request(brain, "POST", `/v1/sessions/${randomUUID()}/end`), "not_found");
  });

  it("deletes a session and its journal, then answers 404", async () => {
    const session = await createSession(brain);
    await postMessage(brain, session.id, "hello", { wait: true, key: "delete-me" });
    expect((await sessionRows(brain.db.sql, session.id)).records).toBeGreaterThan(0);
    const deleted = await request(brain, "DELETE", `/v1/sessions/${session.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    const [rows] = await brain.db.sql<{ sessions: number }[]>`
      SELECT (SELECT count(*) FROM sessions WHERE id = ${session.id})::int AS sessions`;
    expect(rows).toEqual({ sessions: 0 });
    // Nothing under it is left in any table (the journal has no foreign key to cascade: 0014).
    expect(Object.values(await sessionRows(brain.db.sql, session.id)).every((n) => n === 0)).toBe(true);
    expect(await orphanRows(brain.db.sql)).toEqual({});
    expectError(await request(brain, "GET", `/v1/sessions/${session.id}`), "not_found");
    expectError(await request(brain, "DELETE", `/v1/sessions/${session.id}`), "not_found");
    expectError(await request(brain, "POST", `/v1/sessions/${session.id}/end`), "not_found");
    expectError(await request(brain, "GET", `/v1/sessions/${session.id}/events`), "not_found");
    const before = await countRows(brain.db.sql);
    expectError(
      await request(brain, "POST", `/v1/sessions/${session.id}/messages`, { body: { text: "hello" } }),
      "not_found",
    );
    expectError(
      await request(brain, "POST", `/v1/sessions/${session.id}/messages`, {
        body: { text: "again" },
        headers: { "idempotency-key": "unused-key" },
      }),
      "not_found",
    );
    expect(await countRows(brain.db.sql)).toEqual(before);
  });
});

describe("messages", () => {
  it("wait: true answers with the text of the activation the message started", async () => {
    const session = await createSession(brain, { model: scripted("first answer", "second answer") });
    const first = await postMessage(brain, session.id, "one", { wait: true });
    expect(PostMessageResultSchema.parse(first)).toMatchObject({
      sequence: 2,
      activation: { status: "completed", text: "first answer" },
    });
    const second = await postMessage(brain, session.id, "two", { wait: true });
    expect(second.activation).toMatchObject({ status: "completed", text: "second answer" });
    const records = await journal(session.id);
    const ended = records.find((r) => r.seq === second.activation!.sequence);
    expect(ended).toMatchObject({ kind: "activation_ended", payload: { message: second.sequence } });
  });

  it("concurrent messages each get an activation, and wait: true answers every one", async () => {
    const texts = Array.from({ length: 8 }, (_, i) => `answer ${i}`);
    const session = await createSession(brain, { model: scripted(...texts) });
    const abort = new AbortController();
    const answers = await within(
      Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          postMessage(brain, session.id, `question ${i}`, { wait: true, signal: abort.signal }),
        ),
      ),
      "8 concurrent wait: true messages to be answered",
    ).finally(() => abort.abort());
    for (const a of answers) expect(a.activation?.status).toBe("completed");
    // Activations run one at a time, in message order, each with the next step of the script.
    const bySequence = [...answers].sort((a, b) => a.sequence - b.sequence);
    expect(bySequence.map((a) => a.activation?.text)).toEqual(texts);
  });

  it("wait: false answers activation: null while the activation is still open", async () => {
    const session = await sessionWithPendingTool();
    const sent = await postMessage(brain, session.id, "look it up", { wait: false });
    expect(sent).toEqual({ sequence: 2, activation: null });
    // The activation cannot end (its tool's host never connects); the answer did not wait for it.
    await vi.waitFor(async () => expect((await journal(session.id)).map((r) => r.kind)).toContain("tool_call_started"));
    expect((await journal(session.id)).map((r) => r.kind)).not.toContain("activation_ended");
    await request(brain, "POST", `/v1/sessions/${session.id}/end`);
  });

  it("wait: true answers cancelled when the session ends during the activation", async () => {
    const session = await sessionWithPendingTool();
    const waiting = request(brain, "POST", `/v1/sessions/${session.id}/messages`, { body: { text: "go", wait: true } });
    await vi.waitFor(async () => expect((await journal(session.id)).map((r) => r.kind)).toContain("tool_call_started"));
    expect((await request(brain, "POST", `/v1/sessions/${session.id}/end`)).status).toBe(200);
    const answer = await waiting;
    expect(answer.status).toBe(201);
    expect((answer.json as { activation: { status: string } }).activation.status).toBe("cancelled");
  });

  it("Idempotency-Key: the same key and body give the same answer and one record", async () => {
    const session = await createSession(brain);
    const first = await postMessage(brain, session.id, "once", { key: "k-1" });
    const again = await postMessage(brain, session.id, "once", { key: "k-1" });
    expect(again).toEqual(first);
    // Key order and the defaulted `wait` do not make another body.
    const reordered = await request(brain, "POST", `/v1/sessions/${session.id}/messages`, {
      raw: '{"wait":false,"text":"once"}',
      contentType: "application/json",
      headers: { "idempotency-key": "k-1" },
    });
    expect(reordered.json).toEqual(first);
    expect(await userMessages(session.id)).toBe(1);
    // Another key is another message.
    const other = await postMessage(brain, session.id, "once", { key: "k-2" });
    expect(other.sequence).toBeGreaterThan(first.sequence);
    expect(await userMessages(session.id)).toBe(2);
    // Keys are per session: the same key on another session is a new message there.
    const elsewhere = await createSession(brain);
    expect((await postMessage(brain, elsewhere.id, "once", { key: "k-1" })).sequence).toBe(2);
  });

  it("Idempotency-Key: the same key with another body is idempotency_conflict, nothing appended", async () => {
    const session = await createSession(brain);
    await postMessage(brain, session.id, "original", { key: "conflict" });
    const before = await countRows(brain.db.sql);
    const beforeMessages = await userMessages(session.id);
    for (const body of [{ text: "changed" }, { text: "original", wait: true }]) {
      const answer = await request(brain, "POST", `/v1/sessions/${session.id}/messages`, {
        body,
        headers: { "idempotency-key": "conflict" },
      });
      expectError(answer, "idempotency_conflict");
    }
    expect(await userMessages(session.id)).toBe(beforeMessages);
    const after = await countRows(brain.db.sql);
    expect(after.idempotency_keys).toBe(before.idempotency_keys);
    expect(after.sessions).toBe(before.sessions);
  });

  it("Idempotency-Key: 10 concurrent requests with one key append once and answer identically", async () => {
    const session = await createSession(brain);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => postMessage(brain, session.id, "concurrent", { key: "together" })),
    );
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(await userMessages(session.id)).toBe(1);
  });

  it("stores Idempotency-Keys hashed, never in the clear", async () => {
    const session = await createSession(brain);
    const key = `raw-key-${randomUUID()}`;
    await postMessage(brain, session.id, "hashed", { key });
    const sessionKey = `raw-session-key-${randomUUID()}`;
    const created = await request(brain, "POST", "/v1/sessions", {
      body: { model: scripted() },
      headers: { "idempotency-key": sessionKey },
    });
    expect(created.status).toBe(201);
    const rows = await brain.db.sql<{ key_hash: Buffer }[]>`SELECT key_hash FROM idempotency_keys`;
    const dump = await dumpSchemas(brain.db.sql, ["brain", "brain_boss"]);
    for (const k of [key, sessionKey]) {
      expect(rows.some((r) => r.key_hash.equals(sha256(k)))).toBe(true);
      expect(dump).not.toContain(k);
      expect(dump).not.toContain(Buffer.from(k).toString("hex"));
    }
  });
});

describe("session creation with Idempotency-Key", () => {
  it("same key and body → the same session; another body → idempotency_conflict", async () => {
    const body = { model: scripted("x"), metadata: { order: "7" } };
    const create = () =>
      request(brain, "POST", "/v1/sessions", { body, headers: { "idempotency-key": "create-once" } });
    const first = await create();
    expect(first.status).toBe(201);
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);

    const before = await countRows(brain.db.sql);
    const conflict = await request(brain, "POST", "/v1/sessions", {
      body: { ...body, metadata: { order: "8" } },
      headers: { "idempotency-key": "create-once" },
    });
    expectError(conflict, "idempotency_conflict");
    expect(await countRows(brain.db.sql)).toEqual(before);
  });

  it("10 concurrent creations with one key make one session", async () => {
    const before = await countRows(brain.db.sql);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        request(brain, "POST", "/v1/sessions", {
          body: { model: scripted() },
          headers: { "idempotency-key": "create-together" },
        }),
      ),
    );
    for (const a of answers) {
      expect(a.status).toBe(201);
      expect(a.json).toEqual(answers[0]!.json);
    }
    const after = await countRows(brain.db.sql);
    expect(after.sessions).toBe(before.sessions + 1);
    expect(after.idempotency_keys).toBe(before.idempotency_keys + 1);
  });
});
