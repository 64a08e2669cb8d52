import { randomUUID } from "node:crypto";
import type { JSONValue } from "postgres";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { loadRunRecords, type RunRecords, runChecks } from "../src/invariants.js";

// The chaos suite's checks must be able to fail: a small consistent journal passes every check,
// and each way of breaking a promise is reported by its own check. The journal is written with
// SQL here (no server), so each breakage is exact.

let db: TestDatabase;
let session: string;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** One session, seq 1..9: a message, its activation with one model call and a `fetch` call that ended ok. */
beforeEach(async () => {
  const sql = db.sql;
  // The hot tables have no foreign keys to sessions (migration 0014): named, not cascaded to.
  await sql`TRUNCATE sessions, records, calls, activation_budgets, tool_model_calls CASCADE`;
  session = randomUUID();
  await sql`INSERT INTO sessions (id, model, tools, last_seq) VALUES (${session}, '{}', '[]', 9)`;
  const records: [number, string, JSONValue][] = [
    [1, "session_created", {}],
    [2, "user_message", { text: "go" }],
    [3, "activation_started", { message: 2 }],
    [4, "model_call_started", { activation: 3 }],
    [5, "model_call_ended", { call: 4, outcome: { status: "ok" } }],
    [6, "tool_call_started", { tool: "fetch", input: { n: 7 } }],
    [7, "tool_result", { call: 6 }],
    [8, "tool_call_ended", { call: 6, outcome: { status: "ok" } }],
    [9, "activation_ended", { activation: 3, message: 2, status: "completed" }],
  ];
  for (const [seq, kind, payload] of records) {
    await sql`INSERT INTO records (session_id, seq, kind, payload) VALUES (${session}, ${seq}, ${kind}, ${sql.json(payload)})`;
  }
  await sql`
    INSERT INTO calls (session_id, seq, tool, activation_seq, state, outcome, deadline_at, ended_at)
    VALUES (${session}, 6, 'fetch', 3, 'ended', '{"status":"ok"}', now() + interval '1 minute', now())`;
});

/** Appends one record at seq last_seq + 1. */
async function append(kind: string, payload: JSONValue): Promise<void> {
  const [row] = await db.sql<{ seq: number }[]>`UPDATE sessions SET last_seq = last_seq + 1 RETURNING last_seq AS seq`;
  await db.sql`INSERT INTO records (session_id, seq, kind, payload) VALUES (${session}, ${row!.seq}, ${kind}, ${db.sql.json(payload)})`;
}

const anHourAgo = "now() - interval '1 hour'";

function records(): RunRecords {
  return {
    invocations: [{ session, call: 6, tool: "fetch", n: 7, pid: 1 }],
    acks: [
      { source: "client", session, seq: 2, kind: "user_message", call: null },
      { source: "host", session, seq: 7, kind: "tool_result", call: 6 },
    ],
    finished: [{ session, call: 6 }],
    httpRequests: [{ n: 7, requests: 1 }],
    lateWaits: [],
  };
}

async function failing(run: RunRecords = records()): Promise<string[]> {
  await loadRunRecords(db.sql, run);
  return (await runChecks(db.sql)).filter((r) => r.violations > 0).map((r) => r.check.name);
}

describe("chaos invariants", () => {
  it("a consistent journal passes every check", async () => {
    expect(await failing()).toEqual([]);
  });

  it("a gap in the sequence, or last_seq off", async () => {
    await db.sql`DELETE FROM records WHERE seq = 2`;
    expect(await failing({ ...records(), acks: [] })).toEqual(["dense sequences"]);
    await db.sql`INSERT INTO records VALUES (${session}, 2, 'user_message', '{}')`;
    await db.sql`UPDATE sessions SET last_seq = 10`;
    expect(await failing()).toEqual(["dense sequences"]);
  });

  it("a second terminal record, or one for an open call", async () => {
    await append("tool_call_ended", { call: 6 });
    expect(await failing()).toEqual(["exactly one terminal record per ended call"]);
    await db.sql`DELETE FROM records WHERE seq = 10`;
    await db.sql`UPDATE sessions SET last_seq = 9`;
    await db.sql`UPDATE calls SET state = 'running', outcome = NULL`;
    expect(await failing({ ...records(), finished: [] })).toEqual(["exactly one terminal record per ended call"]);
  });

  it("an open call past its deadline", async () => {
    await db.sql`UPDATE records SET kind = 'chaos_tick' WHERE seq = 8`;
    await db.sql`UPDATE calls SET state = 'running', outcome = NULL, deadline_at = now() - interval '1 minute'`;
    expect(await failing({ ...records(), finished: [] })).toEqual(["no call open past its deadline"]);
  });

  it("an activation that never ends, or ends twice", async () => {
    await db.sql`UPDATE records SET kind = 'assistant_message' WHERE seq = 9`;
    expect(await failing()).toEqual([]); // still running: recent
    await db.sql`UPDATE records SET created_at = ${db.sql.unsafe(anHourAgo)} WHERE seq = 3`;
    expect(await failing()).toEqual(["every activation ends once"]);
    await db.sql`UPDATE records SET kind = 'activation_ended' WHERE seq = 9`;
    await append("activation_ended", { activation: 3, status: "failed" });
    expect(await failing()).toEqual(["every activation ends once"]);
  });

  it("a model call left open, or ended twice", async () => {
    await db.sql`UPDATE records SET kind = 'assistant_message', created_at = ${db.sql.unsafe(anHourAgo)} WHERE seq = 5`;
    await db.sql`UPDATE records SET created_at = ${db.sql.unsafe(anHourAgo)} WHERE seq = 4`;
    expect(await failing()).toEqual(["every model call ends once"]);
    await db.sql`UPDATE records SET kind = 'model_call_ended' WHERE seq = 5`;
    await append("model_call_ended", { call: 4, outcome: { status: "unknown" } });
    expect(await failing()).toEqual(["every model call ends once"]);
  });

  it("a handler run twice, or for a call never journaled", async () => {
    const r = records();
    r.invocations.push({ ...r.invocations[0]!, pid: 2 });
    expect(await failing(r)).toEqual(["host handlers ran at most once"]);
    expect(await failing({ ...records(), invocations: [{ session, call: 7, tool: "quick", n: 8, pid: 1 }] })).toEqual([
      "host handlers ran only for journaled calls",
    ]);
  });

  it("an HTTP Environment request twice, or for no call", async () => {
    expect(await failing({ ...records(), httpRequests: [{ n: 7, requests: 2 }] })).toEqual([
      "HTTP Environment calls ran at most once",
    ]);
    expect(await failing({ ...records(), httpRequests: [{ n: 8, requests: 1 }] })).toEqual([
      "HTTP Environment calls ran only for journaled calls",
    ]);
  });

  it("an acknowledged write missing, or of another kind or call", async () => {
    for (const ack of [
      { source: "client", session, seq: 10, kind: "user_message", call: null },
      { source: "client", session, seq: 1, kind: "activation_ended", call: null },
      { source: "host", session, seq: 7, kind: "tool_result", call: 9 },
      { source: "host", session, seq: 10, kind: "chaos_tick", call: 9 },
    ]) {
      if (ack.kind === "chaos_tick") await append("chaos_tick", { call: 6, data: {} });
      expect(await failing({ ...records(), acks: [ack] })).toEqual(["every acknowledged write is in the journal"]);
    }
  });

  it("a waiting client not answered although its turn had ended", async () => {
    const late = (ms: number) => ({
      ...records(),
      lateWaits: [{ session, seq: 2, gaveUpAt: new Date(Date.now() + ms), url: "http://127.0.0.1:1" }],
    });
    expect(await failing(late(0))).toEqual([]); // gave up as the turn ended: too close to call
    expect(await failing(late(60_000))).toEqual(["waiting clients are answered"]);
  });

  it("an acknowledged finish whose call did not end ok", async () => {
    await db.sql`UPDATE calls SET outcome = '{"status":"timeout"}'`;
    expect(await failing()).toEqual(["every acknowledged finish ended its call ok"]);
  });
});
