import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import type { Sql } from "@aexhq/brain-db/connect";
import { appendUnchecked, endSession, rel, transitionCall } from "@aexhq/brain-db/ops";
import { JournalWriter, type WriteOp } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession } from "../../testkit/session-rows.js";

// Appends and call transitions of different sessions in one batch share a statement
// (db/src/writer/merge.ts). These tests run the same writes twice, merged into one batch and one by
// one, and require the journals, calls and budgets to come out identical: merging may change the
// number of statements and nothing else.

let db: TestDatabase;
const serverId = randomUUID();
const hostId = randomUUID();
const connectionId = randomUUID();
const writers: JournalWriter[] = [];
const MAX_BYTES = 200;

function writer(sql: Sql): JournalWriter {
  const w = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID() });
  writers.push(w);
  return w;
}

const newSession = (id: string) => bareSession(id, hostId, serverId);

const started = (tool: string) => ({
  kind: "tool_call_started",
  payload: { tool, input: { tool } },
  call: { tool, activationSeq: 2, hostId, connectionId, state: "running" as const, deadlineAt: null },
});

/** Sessions a, b, c (c ended), each with an activation and a running call at seq 3. */
async function prepare(w: JournalWriter): Promise<{ a: string; b: string; c: string }> {
  const ids = { a: randomUUID(), b: randomUUID(), c: randomUUID() };
  for (const id of Object.values(ids)) {
    await w.submit(newSession(id));
    await w.submit(appendUnchecked(id, [{ kind: "model_call_started", payload: { activation: 2 } }, started("t")]));
  }
  await w.submit(endSession(ids.c, "done"));
  return ids;
}

/**
 * The writes under test, in submission order. Each session gets several, interleaved with the
 * others', so a merged batch holds rounds: a session's k-th write in the k-th statement of its kind.
 */
function script(s: { a: string; b: string; c: string }): WriteOp<unknown>[] {
  const onA = { sessionId: s.a, seq: 3, hostId };
  const onB = { sessionId: s.b, seq: 3, hostId };
  return [
    appendUnchecked(s.a, [
      { kind: "note", payload: { n: 1 } },
      { kind: "reply", payload: { to: rel(-1) } },
    ]),
    transitionCall(onB, { type: "emit", kind: "progress", data: { pct: 50 } }, MAX_BYTES),
    appendUnchecked(s.c, [{ kind: "note", payload: { refused: true } }]),
    appendUnchecked(s.b, [{ kind: "model_call_started", payload: { activation: 2 } }, started("u")]),
    transitionCall(onA, { type: "emit", kind: "progress", data: { big: "x".repeat(MAX_BYTES) } }, MAX_BYTES),
    transitionCall(onB, { type: "result", outcome: { status: "ok" }, content: "half" }, MAX_BYTES),
    appendUnchecked(s.a, [{ kind: "note", payload: { n: 2 } }], { epoch: 999 }),
    transitionCall(onA, { type: "finish", outcome: { status: "ok" }, content: "done" }, MAX_BYTES),
    transitionCall(onB, { type: "finish" }, MAX_BYTES),
    transitionCall(onA, { type: "emit", kind: "late", data: {} }, MAX_BYTES),
    appendUnchecked(s.b, [{ kind: "note", payload: { after: rel(-1) } }]),
  ];
}

/** Everything the writes left behind in a session, with ids left out so two runs compare. */
async function stateOf(sql: Sql, id: string) {
  const records = await sql<
    { seq: number; kind: string; payload: unknown }[]
  >`SELECT seq, kind, payload FROM records WHERE session_id = ${id} ORDER BY seq`;
  const calls = await sql`
    SELECT seq, tool, state, outcome, activation_seq, returned_at IS NOT NULL AS returned, ended_at IS NOT NULL AS ended
    FROM calls WHERE session_id = ${id} ORDER BY seq`;
  const budgets = await sql`
    SELECT activation_seq, model_calls, emitted_bytes FROM activation_budgets WHERE session_id = ${id}`;
  const [session] = await sql`SELECT last_seq FROM sessions WHERE id = ${id}`;
  return { records: [...records], calls: [...calls], budgets: [...budgets], lastSeq: session?.last_seq };
}

/** Results without what differs between runs (timestamps). */
const comparable = (results: unknown[]) =>
  JSON.parse(JSON.stringify(results, (k, v) => (k === "createdAt" || k === "writtenAt" ? undefined : v)));

beforeAll(async () => {
  db = await createTestDatabase({ max: 6 });
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
});
afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()));
  await db?.drop();
});

/** Submits `ops` so that they commit as one batch: queued while an earlier batch is in flight. */
async function asOneBatch(w: JournalWriter, ops: WriteOp<unknown>[]): Promise<PromiseSettledResult<unknown>[]> {
  const blocker = w.submit({
    keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
    run: (tx) => tx`SELECT pg_sleep(0.05)`.execute(),
  });
  const results = Promise.allSettled(ops.map((op) => w.submit(op)));
  await blocker;
  return results;
}

describe("writes merged into one statement per kind", () => {
  it("journals exactly what the same writes one by one journal, in fewer statements", async () => {
    const w = writer(db.sql);
    const merged = await prepare(w);
    const single = await prepare(w);

    const before = { ...w.stats };
    const mergedResults = await asOneBatch(w, script(merged));
    expect(w.stats.batches - before.batches).toBe(2);
    const writes = w.stats.writes - before.writes - 1;
    const statements = w.stats.statements - before.statements - 1;
    expect(writes).toBe(11);
    // Rounds: a1 b1 c1 | b2 a2 | b3 a3 | a4 b4 | a5 … merged by kind within each round.
    expect(statements).toBeLessThan(writes);
    expect(w.stats.merged - before.merged).toBe(1);
    expect(w.stats.fallbacks).toBe(before.fallbacks);

    const singleResults: PromiseSettledResult<unknown>[] = [];
    for (const op of script(single)) {
      singleResults.push(await w.submit(op).then((value) => ({ status: "fulfilled" as const, value })));
    }
    expect(comparable(mergedResults)).toEqual(comparable(singleResults));
    for (const key of ["a", "b", "c"] as const) {
      expect(await stateOf(db.sql, merged[key])).toEqual(await stateOf(db.sql, single[key]));
    }

    // What the script means, spelled out once (the comparison alone would pass if both were wrong).
    const [a, b] = [await stateOf(db.sql, merged.a), await stateOf(db.sql, merged.b)];
    const kinds = (x: { records: { kind: string }[] }) => x.records.map((r) => r.kind).slice(3);
    // a: its note and reply (resolved to the note's seq), the over-budget emit and the fenced
    // append left out, its finish, and nothing after it.
    expect(kinds(a)).toEqual(["note", "reply", "tool_result", "tool_call_ended"]);
    expect(a.records[4]!.payload).toEqual({ to: 4 });
    expect(a.calls[0]).toMatchObject({ state: "ended", outcome: { status: "ok" } });
    // b: the emit, its second model call and call, the result, the end, and the note after it.
    expect(kinds(b)).toEqual([
      "progress",
      "model_call_started",
      "tool_call_started",
      "tool_result",
      "tool_call_ended",
      "note",
    ]);
    expect(b.records[8]!.payload).toEqual({ after: 8 });
    expect(b.budgets).toEqual([{ activation_seq: 2, model_calls: 2, emitted_bytes: 48 }]);
    expect((await stateOf(db.sql, merged.c)).lastSeq).toBe(5);
    const values = mergedResults.map((r) => (r as PromiseFulfilledResult<unknown>).value);
    expect(values[2]).toEqual({ records: [] });
    expect(values[4]).toMatchObject({ seq: null, overBudget: true });
    expect(values[6]).toEqual({ records: [] });
    expect(values[9]).toMatchObject({ seq: null, overBudget: false });
  });

  it("without merging (a Citus cluster's writer): one keyed statement a write, the same journal", async () => {
    const w = writer(db.sql);
    const apart = new JournalWriter(db.sql, {
      channel: channelFor("brain"),
      origin: randomUUID(),
      mergeSessions: false,
    });
    writers.push(apart);
    const merged = await prepare(w);
    const keyed = await prepare(apart);
    const mergedResults = await asOneBatch(w, script(merged));
    const before = { ...apart.stats };
    const keyedResults = await asOneBatch(apart, script(keyed));
    expect(apart.stats.statements - before.statements - 1).toBe(apart.stats.writes - before.writes - 1);
    expect(apart.stats.merged).toBe(before.merged);
    expect(comparable(keyedResults)).toEqual(comparable(mergedResults));
    for (const key of ["a", "b", "c"] as const) {
      expect(await stateOf(db.sql, keyed[key])).toEqual(await stateOf(db.sql, merged[key]));
    }
    // Its connection prepared keyed statements only: each reads its input directly, none through
    // write_inputs (which a merged statement needs and a Citus worker lacks).
    const [prepared] = await apart.submit({
      keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
      run: (tx) =>
        tx<{ keyed: number; merged: number }[]>`
          SELECT count(*) FILTER (WHERE statement LIKE '%jsonb_array_elements($1::text::jsonb) AS e%')::int AS keyed,
                 count(*) FILTER (WHERE statement LIKE '%write_inputs%')::int AS merged
          FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared%'`,
    });
    expect(prepared?.keyed).toBeGreaterThanOrEqual(2);
    expect(prepared?.merged).toBe(0);
  });

  it("a write that fails in a merged statement fails alone; the others commit", async () => {
    const w = writer(db.sql);
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) await w.submit(newSession(id));
    const before = { ...w.stats };
    const [good1, bad, good2] = await asOneBatch(w, [
      appendUnchecked(ids[0]!, [{ kind: "note", payload: { ok: 1 } }]),
      // Postgres refuses a NUL in jsonb text: the merged statement fails as a whole.
      appendUnchecked(ids[1]!, [{ kind: "note", payload: { text: "a\u0000b" } }]),
      appendUnchecked(ids[2]!, [{ kind: "note", payload: { ok: 2 } }]),
    ]);
    expect(w.stats.fallbacks - before.fallbacks).toBe(1);
    expect(good1).toMatchObject({ status: "fulfilled", value: { records: [{ seq: 2, kind: "note" }] } });
    expect(bad!.status).toBe("rejected");
    expect(good2).toMatchObject({ status: "fulfilled", value: { records: [{ seq: 2, kind: "note" }] } });
    expect((await stateOf(db.sql, ids[1]!)).lastSeq).toBe(1);
  });

  it("a session id spelled in capitals, braces or without hyphens merges as that session", async () => {
    const w = writer(db.sql);
    const id = randomUUID();
    const other = randomUUID();
    for (const x of [id, other]) await w.submit(newSession(x));
    // Every spelling Postgres reads as this uuid: each is its own write to the one session, in
    // order, and each gets its own result back.
    const spellings = [id, id.toUpperCase(), `{${id}}`, id.replaceAll("-", "")];
    const results = await asOneBatch(w, [
      appendUnchecked(other, [{ kind: "note", payload: { n: 0 } }]),
      ...spellings.map((s, n) => appendUnchecked(s, [{ kind: "note", payload: { n } }])),
    ]);
    const seqs = results.map(
      (r) => (r as PromiseFulfilledResult<{ records: { seq: number }[] }>).value.records[0]?.seq,
    );
    expect(seqs).toEqual([2, 2, 3, 4, 5]);
    const { records } = await stateOf(db.sql, id);
    expect(records.map((r) => r.kind)).toEqual(["session_created", "note", "note", "note", "note"]);
    expect(records.slice(1).map((r) => r.payload)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
  });
});
