import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import {
  appendUnchecked,
  deleteSession,
  endCalls,
  endSession,
  prune,
  startToolModelCall,
  transitionCall,
} from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { orphanRows, sessionRows } from "../../testkit/orphans.js";
import { bareSession } from "../../testkit/session-rows.js";

// The hot tables (records, calls, activation_budgets, tool_model_calls) have no foreign keys
// (migration 0014): these tests prove that what the keys promised still holds, by how the rows are
// written and deleted. Each would find orphans if deletion did not lock the session row before
// deleting its children, or if a budget were charged without locking the call row.

let db: TestDatabase;
let other: Sql;
const serverId = randomUUID();
const hostId = randomUUID();
const writers: JournalWriter[] = [];

function writer(sql: Sql): JournalWriter {
  const w = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID() });
  writers.push(w);
  return w;
}

const orphans = () => orphanRows(db.sql);
const rowsOf = (sessionId: string) => sessionRows(db.sql, sessionId);

const session = (id: string) => bareSession(id, hostId, serverId, { workspace: { "a.txt": "a" } });

const startedCall = (connectionId: string | null = randomUUID()) => ({
  kind: "tool_call_started",
  payload: { tool: "t", input: {} },
  call: { tool: "t", activationSeq: 1, hostId, connectionId, state: "running" as const, deadlineAt: null },
});

const emit = { type: "emit", kind: "progress", data: { n: 1 } } as const;

/** A session with a row in every table that has a session_id column. Returns it and its call. */
async function populated(w: JournalWriter): Promise<{ id: string; call: number }> {
  const id = randomUUID();
  await w.submit(session(id));
  const { records } = await w.submit(
    appendUnchecked(id, [{ kind: "model_call_started", payload: { activation: 1 } }, startedCall()]),
  );
  const call = records[1]!.seq;
  const ref = { sessionId: id, seq: call, hostId };
  expect((await w.submit(transitionCall(ref, emit, 1_000_000))).seq).not.toBeNull();
  expect((await w.submit(startToolModelCall(ref, { origin: { type: "tool" } }, serverId, 10))).seq).not.toBeNull();
  // Tables written off the hot path (they keep their foreign keys and cascades).
  await db.sql`INSERT INTO mcp_tasks (id, session_id, seq, poll_interval_ms) VALUES (${randomUUID()}, ${id}, ${call}, 100)`;
  await db.sql`INSERT INTO trace_cursors (session_id, exported_seq) VALUES (${id}, 1)`;
  await db.sql`INSERT INTO session_hosts (session_id, env_name, host_id) VALUES (${id}, 'e', ${hostId})`;
  await db.sql`INSERT INTO environments (session_id, name, type, config) VALUES (${id}, 'e', 'http', '{}')`;
  await db.sql`INSERT INTO session_secrets (session_id, name, key_id, nonce, ciphertext, tag)
               VALUES (${id}, 's', 'k', '\\x00', '\\x00', '\\x00')`;
  return { id, call };
}

beforeAll(async () => {
  db = await createTestDatabase({ max: 12 });
  other = connect(db.url, { schema: "brain", searchPath: true, max: 12 });
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
});
afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()));
  await other?.end();
  await db?.drop();
});

describe("hot tables without foreign keys", () => {
  it("has no foreign key on the hot tables, and keeps the others", async () => {
    const rows = await db.sql<{ table: string }[]>`
      SELECT conrelid::regclass::text AS table FROM pg_constraint
      WHERE contype = 'f' AND connamespace = 'brain'::regnamespace`;
    const tables = new Set(rows.map((r) => r.table));
    for (const hot of ["records", "calls", "activation_budgets", "tool_model_calls"])
      expect(tables.has(hot)).toBe(false);
    for (const kept of ["mcp_tasks", "trace_cursors", "session_hosts", "workspace_files"]) {
      expect(tables.has(kept)).toBe(true);
    }
    // The sessions row's own references are checked by triggers instead (migration 0016,
    // session-references.test.ts).
    expect(tables.has("sessions")).toBe(false);
  });

  it("deleting a session leaves no row in any table with a session_id", async () => {
    const w = writer(db.sql);
    const { id } = await populated(w);
    const keep = await populated(w);
    const before = await rowsOf(id);
    // Every such table is covered: a new one must be added to `populated`.
    for (const [table, n] of Object.entries(before)) expect(n, table).toBeGreaterThan(0);
    const result = await w.submit(deleteSession(id));
    expect(result.deleted).toBe(true);
    expect(result.open.length).toBe(1);
    expect(Object.values(await rowsOf(id)).every((n) => n === 0)).toBe(true);
    expect(await orphans()).toEqual({});
    // Another session's rows are untouched.
    expect(await rowsOf(keep.id)).toEqual(before);
  });

  it("retention deletes expired sessions with everything under them", async () => {
    const w = writer(db.sql);
    const expired = [await populated(w), await populated(w)];
    const kept = await populated(w);
    const keptRows = await rowsOf(kept.id);
    for (const s of [...expired, kept]) await w.submit(endSession(s.id, "done"));
    const ids = expired.map((s) => s.id);
    await db.sql`UPDATE sessions SET ended_at = now() - interval '2 days' WHERE id = ANY(${db.sql.array(ids)}::uuid[])`;
    // Small batches: the journal goes in several chunks, each record with its call.
    const counts = await prune(db.sql, "brain", { olderThanSeconds: 3600, recordsBatch: 2, batch: 1 });
    expect(counts?.sessions).toBe(2);
    for (const id of ids) expect(Object.values(await rowsOf(id)).every((n) => n === 0)).toBe(true);
    expect(await orphans()).toEqual({});
    // The session within the window keeps everything (plus its ending's records).
    const after = await rowsOf(kept.id);
    for (const [table, n] of Object.entries(keptRows)) expect(after[table], table).toBeGreaterThanOrEqual(n);
  });

  it("writes nothing for a session that does not exist or was deleted", async () => {
    const w = writer(db.sql);
    const missing = randomUUID();
    expect((await w.submit(appendUnchecked(missing, [startedCall()], { requireActive: false }))).records).toEqual([]);
    expect(Object.values(await rowsOf(missing)).every((n) => n === 0)).toBe(true);

    const { id, call } = await populated(w);
    // A second open call, so that transitions have an open call to name until the deletion.
    const { records } = await w.submit(appendUnchecked(id, [startedCall()]));
    const open = { sessionId: id, seq: records[0]!.seq, hostId };
    await w.submit(deleteSession(id));
    expect(
      (await w.submit(appendUnchecked(id, [{ kind: "note", payload: {} }], { requireActive: false }))).records,
    ).toEqual([]);
    expect((await w.submit(transitionCall(open, emit, 1_000_000))).seq).toBeNull();
    expect((await w.submit(transitionCall({ sessionId: id, seq: call, hostId }, { type: "finish" }))).seq).toBeNull();
    expect((await w.submit(startToolModelCall(open, {}, serverId, 10))).seq).toBeNull();
    expect(await w.submit(endCalls({ sessionId: id }, { status: "cancelled", cause: "test" }))).toEqual([]);
    expect(Object.values(await rowsOf(id)).every((n) => n === 0)).toBe(true);
    expect(await orphans()).toEqual({});
  });

  it("leaves no orphan when deletions race appends, transitions and model calls", async () => {
    const w = writer(db.sql);
    // Each racing write has a journal writer of its own (its own connection), as servers and
    // workers do: a deadlock Postgres breaks is retried by the writer, the product's path.
    const racers = Array.from({ length: 9 }, () => writer(other));
    // Writes that landed before the deletion, and writes that found the session gone: the race
    // must have gone both ways for the test to mean anything.
    let landed = 0;
    let refused = 0;
    const wroteSomething = (r: unknown): boolean => {
      if (r && typeof r === "object" && "records" in r) return (r as { records: unknown[] }).records.length > 0;
      return (r as { seq: number | null }).seq !== null;
    };
    for (let i = 0; i < 40; i++) {
      const { id } = await populated(w);
      // A call opened by an append that may commit after the deletion chose what to cancel.
      const { records } = await w.submit(appendUnchecked(id, [startedCall()]));
      const ref = { sessionId: id, seq: records[0]!.seq, hostId };
      const writes: Promise<unknown>[] = [];
      for (let k = 0; k < 3; k++) {
        const note = appendUnchecked(id, [{ kind: "note", payload: { k } }, startedCall()], { requireActive: false });
        writes.push(racers[3 * k]!.submit(note));
        writes.push(racers[3 * k + 1]!.submit(transitionCall(ref, emit, 1_000_000)));
        writes.push(racers[3 * k + 2]!.submit(startToolModelCall(ref, {}, serverId, 100)));
      }
      // The deletion starts in the middle of the writes, on its own connection.
      const deletion = w.submit(deleteSession(id));
      writes.splice(i % writes.length, 0, deletion);
      const settled = await Promise.allSettled(writes);
      // No write fails: a deletion takes the session row first, and every write's first lock under
      // a session is on that row, so they queue (and none fails on a key).
      for (const s of settled) expect(s.status === "rejected" ? (s.reason as Error).message : "ok").toBe("ok");
      expect((await deletion).deleted).toBe(true);
      for (const s of settled) {
        if (s.status !== "fulfilled" || (s.value as { deleted?: boolean }).deleted !== undefined) continue;
        if (wroteSomething(s.value)) landed++;
        else refused++;
      }
      expect(Object.values(await rowsOf(id)).every((n) => n === 0)).toBe(true);
      expect(await orphans()).toEqual({});
    }
    expect(landed).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  }, 120_000);
});
