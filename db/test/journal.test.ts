import { randomUUID } from "node:crypto";
import { type CommitKeys, channelFor, emptyKeys, encodeKeys, Touch } from "@aexhq/brain-db/commits";
import type { Sql } from "@aexhq/brain-db/connect";
import { appendUnchecked, endCalls, transitionCall } from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession } from "../../testkit/session-rows.js";

let db: TestDatabase;
let other: Sql;
const serverId = randomUUID();
const hostId = randomUUID();

const writers: JournalWriter[] = [];
function writer(sql: Sql, onCommit?: (keys: CommitKeys) => void): JournalWriter {
  const w = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID(), onCommit });
  writers.push(w);
  return w;
}

async function newSession(w: JournalWriter): Promise<string> {
  const id = randomUUID();
  await w.submit(bareSession(id, hostId, serverId));
  return id;
}

/** A dispatched call, as the Agentloop would create it. */
async function newCall(w: JournalWriter, sessionId: string): Promise<number> {
  const r = await w.submit(
    appendUnchecked(sessionId, [
      {
        kind: "tool_call_started",
        payload: { tool: "t", input: {} },
        call: { tool: "t", activationSeq: 1, hostId, connectionId: randomUUID(), state: "running", deadlineAt: null },
      },
    ]),
  );
  return r.records[0]!.seq;
}

beforeAll(async () => {
  db = await createTestDatabase({ max: 10 });
  other = (await import("@aexhq/brain-db/connect")).connect(db.url, { schema: "brain", searchPath: true, max: 10 });
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
});
afterAll(async () => {
  // A writer holds a connection of its own until closed.
  await Promise.all(writers.map((w) => w.close()));
  await other?.end();
  await db?.drop();
});

describe("journal", () => {
  it("keeps seq dense and unique per session when two processes append concurrently", async () => {
    const a = writer(db.sql);
    const b = writer(other);
    const id = await newSession(a);
    const writes = [];
    for (let i = 0; i < 100; i++) {
      const w = i % 2 === 0 ? a : b;
      writes.push(
        w.submit(
          appendUnchecked(id, [
            { kind: "note", payload: { i } },
            { kind: "note2", payload: { i } },
          ]),
        ),
      );
    }
    await Promise.all(writes);
    const rows = await db.sql<{ seq: number; kind: string; i: number }[]>`
      SELECT seq, kind, (payload->>'i')::int AS i FROM records WHERE session_id = ${id} ORDER BY seq`;
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 201 }, (_, k) => k + 1));
    // One append's records are adjacent: a pair never interleaves with another append.
    for (let k = 1; k < rows.length; k += 2) {
      expect(rows[k]!.kind).toBe("note");
      expect(rows[k + 1]!.kind).toBe("note2");
      expect(rows[k + 1]!.i).toBe(rows[k]!.i);
    }
    // Submission order is kept within one writer.
    const fromA = rows.filter((r) => r.kind === "note" && r.i % 2 === 0).map((r) => r.i);
    expect(fromA).toEqual([...fromA].sort((x, y) => x - y));
  });

  it("refuses a second write of the same (session_id, seq)", async () => {
    const id = await newSession(writer(db.sql));
    await expect(
      db.sql`INSERT INTO records (session_id, seq, kind, payload) VALUES (${id}, 1, 'x', '{}')`,
    ).rejects.toMatchObject({ code: "23505" });
  });

  it("writes a call's terminal outcome once: the first terminal cause wins across processes", async () => {
    const a = writer(db.sql);
    const b = writer(other);
    const id = await newSession(a);
    for (let round = 0; round < 10; round++) {
      const seq = await newCall(a, id);
      const [finish, timeout] = await Promise.all([
        a.submit(
          transitionCall({ sessionId: id, seq, hostId }, {
            type: "finish",
            outcome: { status: "ok", value: 1 },
          } as never),
        ),
        b.submit(endCalls({ sessionId: id, seqs: [seq] }, { status: "timeout", cause: "deadline" })),
      ]);
      const ends = await db.sql<{ outcome: { status: string } }[]>`
        SELECT payload->'outcome' AS outcome FROM records
        WHERE session_id = ${id} AND kind = 'tool_call_ended' AND (payload->>'call')::bigint = ${seq}`;
      expect(ends).toHaveLength(1);
      const [call] = await db.sql<{ outcome: { status: string } }[]>`
        SELECT outcome FROM calls WHERE session_id = ${id} AND seq = ${seq}`;
      expect(call!.outcome.status).toBe(ends[0]!.outcome.status);
      // Exactly one of the two writers won.
      expect((finish.seq === null ? 0 : 1) + timeout.length).toBe(1);
    }
  });

  it("refuses reports after the terminal outcome", async () => {
    const w = writer(db.sql);
    const id = await newSession(w);
    const seq = await newCall(w, id);
    await w.submit(endCalls({ sessionId: id, seqs: [seq] }, { status: "cancelled", cause: "sdk_cancel" }));
    const late = await w.submit(transitionCall({ sessionId: id, seq, hostId }, { type: "emit", kind: "x", data: 1 }));
    expect(late.seq).toBeNull();
    const [n] = await db.sql`SELECT count(*)::int AS n FROM records WHERE session_id = ${id} AND kind = 'x'`;
    expect(n!.n).toBe(0);
  });

  it("fences a stale owner: an append with an old epoch writes nothing", async () => {
    const w = writer(db.sql);
    const id = await newSession(w);
    await db.sql`UPDATE sessions SET owner_epoch = owner_epoch + 1 WHERE id = ${id}`;
    const stale = await w.submit(appendUnchecked(id, [{ kind: "activation_started", payload: {} }], { epoch: 1 }));
    expect(stale.records).toEqual([]);
    const fresh = await w.submit(appendUnchecked(id, [{ kind: "activation_started", payload: {} }], { epoch: 2 }));
    expect(fresh.records.map((r) => r.seq)).toEqual([2]);
  });

  it("group-commits concurrent writes and sends one NOTIFY per commit, carrying only keys", async () => {
    const received: string[] = [];
    const listener = await other.listen(channelFor("brain"), (p) => received.push(p));
    const w = writer(db.sql);
    const sessions = await Promise.all(Array.from({ length: 20 }, () => newSession(w)));
    await new Promise((r) => setTimeout(r, 100));
    received.length = 0;
    const before = w.stats.batches;
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        w.submit(appendUnchecked(sessions[i % 20]!, [{ kind: "tool_result", payload: { big: "x".repeat(1000) } }])),
      ),
    );
    const batches = w.stats.batches - before;
    expect(batches).toBeLessThan(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toHaveLength(batches);
    for (const p of received) {
      expect(p.length).toBeLessThan(8000);
      expect(p).not.toContain("xxxx");
    }
    await listener.unlisten();
  });

  it("splits NOTIFY payloads that would pass 8000 bytes", () => {
    const keys: CommitKeys = emptyKeys();
    for (let i = 0; i < 1000; i++) keys.sessions.set(randomUUID(), Touch.observation);
    const payloads = encodeKeys(randomUUID(), keys);
    expect(payloads.length).toBeGreaterThan(1);
    const seen = new Set<string>();
    for (const p of payloads) {
      expect(Buffer.byteLength(p)).toBeLessThan(8000);
      for (const [id] of JSON.parse(p).s) seen.add(id);
    }
    expect(seen.size).toBe(1000);
  });

  it("fails one bad write alone: the rest of its batch commits", async () => {
    const w = writer(db.sql);
    const id = await newSession(w);
    const results = await Promise.allSettled([
      w.submit(appendUnchecked(id, [{ kind: "ok1", payload: {} }])),
      w.submit({ keys: () => emptyKeys(), run: (tx) => tx`SELECT 1/0` }),
      w.submit(appendUnchecked(id, [{ kind: "ok2", payload: {} }])),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const kinds = await db.sql`SELECT kind FROM records WHERE session_id = ${id} ORDER BY seq`;
    expect(kinds.map((k) => k.kind)).toEqual(["session_created", "ok1", "ok2"]);
  });
});
