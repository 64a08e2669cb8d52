import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import { appendUnchecked } from "@aexhq/brain-db/ops";
import { JournalWriter, type WriteOp } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import {
  asOneBatch,
  comparable,
  expectScriptOutcome,
  insertScriptRows,
  prepareSessions,
  type ScriptRows,
  script,
  scriptRows,
  stateOf,
} from "../../../testkit/merge-script.js";
import { bareSession } from "../../../testkit/session-rows.js";

// A Citus cluster's journal writes (WriterOptions.citus): each append and call transition a
// statement of its own, delegated to the worker holding its session (ops/on-session-shards.ts),
// and each batch a transaction with BEGIN and COMMIT. The same script as writer-merge.test.ts,
// with the same outcome; and a batch that fails is undone on every worker.

let db: TestDatabase;
let rows: ScriptRows;
const writers: JournalWriter[] = [];

function clusterWriter(): JournalWriter {
  const w = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID(), citus: true });
  writers.push(w);
  return w;
}

beforeAll(async () => {
  db = await createTestDatabase({ max: 6 });
  rows = scriptRows();
  await insertScriptRows(db.sql, rows);
});
afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()));
  await db?.drop();
});

describe("journal writes on a Citus cluster", () => {
  it("each write delegated whole to its session's worker journals what one Postgres journals", async () => {
    const w = clusterWriter();
    const batched = await prepareSessions(w, rows);
    const single = await prepareSessions(w, rows);
    const before = { ...w.stats };
    const batchedResults = await asOneBatch(w, script(batched, rows));
    expect(w.stats.statements - before.statements).toBe(w.stats.writes - before.writes);
    expect(w.stats.merged).toBe(before.merged);
    expect(w.stats.fallbacks).toBe(before.fallbacks);
    await expectScriptOutcome(db.sql, batched, batchedResults);

    const singleResults: PromiseSettledResult<unknown>[] = [];
    for (const op of script(single, rows)) {
      singleResults.push(await w.submit(op).then((value) => ({ status: "fulfilled" as const, value })));
    }
    expect(comparable(batchedResults)).toEqual(comparable(singleResults));
    for (const key of ["a", "b", "c"] as const) {
      expect(await stateOf(db.sql, batched[key])).toEqual(await stateOf(db.sql, single[key]));
    }
    // Each went as one call of on_session_shards, Citus delegating it (its plan: one task, sent
    // to a worker with the function call itself); no append statement reached the coordinator's planner whole.
    const [plan] = await db.sql.unsafe<{ "QUERY PLAN": string }[]>(
      `EXPLAIN (FORMAT TEXT) SELECT * FROM brain.on_session_shards('${batched.a}', 'SELECT 1', '{}') AS r(x int)`,
    );
    expect(plan?.["QUERY PLAN"]).toMatch(/Custom Scan \(Citus Adaptive\)/);
  });

  it("a batch is a transaction block, never a pipeline, which Citus takes for no transaction", async () => {
    const w = clusterWriter();
    const none = () => ({ sessions: new Map(), hosts: new Set<string>(), releases: new Map() });
    // SAVEPOINT is refused outside a transaction block; a pipeline's implicit transaction is none,
    // and Citus commits the statements of one on their workers as they run.
    await expect(
      w.submit({ notify: none(), keys: none, run: (tx) => tx`SAVEPOINT brain_batch`.execute() }),
    ).resolves.toBeDefined();
  });

  it("a batch that fails after its writes ran is undone on their workers: each then commits once", async () => {
    const w = clusterWriter();
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) await w.submit(bareSession(id, rows.hostId, rows.serverId));
    const before = { ...w.stats };
    const none = () => ({ sessions: new Map(), hosts: new Set<string>(), releases: new Map() });
    // A write Citus routes to the session's worker as it is (as most of Brain's are): it counts.
    const bump: WriteOp<unknown> = {
      notify: none(),
      keys: none,
      run: (tx) =>
        tx`UPDATE sessions SET metadata = jsonb_build_object('n', COALESCE((metadata->>'n')::int, 0) + 1)
        WHERE id = ${ids[0]!}`.execute(),
    };
    // Behind a write in flight, so that these go as one batch; each announces its keys, so that on
    // one Postgres the batch would be one pipeline.
    const blocker = w.submit({ notify: none(), keys: none, run: (tx) => tx`SELECT pg_sleep(0.05)`.execute() });
    // Fails on the coordinator, after the writes before it ran on their workers; the writer then
    // runs each write alone.
    const failing: WriteOp<unknown> = { notify: none(), keys: none, run: (tx) => tx`SELECT 1 / 0`.execute() };
    const ops: WriteOp<unknown>[] = [
      appendUnchecked(ids[0]!, [{ kind: "note", payload: { ok: 1 } }]),
      bump,
      failing,
      appendUnchecked(ids[1]!, [{ kind: "note", payload: { ok: 2 } }]),
    ];
    const settled = Promise.allSettled(ops.map((op) => w.submit(op)));
    await blocker;
    const [good1, bumped, bad, good2] = await settled;
    expect(w.stats.fallbacks - before.fallbacks).toBe(1);
    expect(bumped!.status).toBe("fulfilled");
    expect(bad).toMatchObject({ status: "rejected", reason: { code: "22012" } });
    // Had a write stayed committed on its worker when the batch failed (as in a pipeline, which
    // Citus takes for no transaction at all), the retry would apply it a second time.
    const [session] = await db.sql<
      { n: number }[]
    >`SELECT (metadata->>'n')::int AS n FROM sessions WHERE id = ${ids[0]!}`;
    expect(session?.n).toBe(1);
    for (const [id, result] of [
      [ids[0]!, good1],
      [ids[1]!, good2],
    ] as const) {
      expect(result).toMatchObject({ status: "fulfilled", value: { records: [{ seq: 2, kind: "note" }] } });
      const state = await stateOf(db.sql, id);
      expect(state.records.map((r) => r.kind)).toEqual(["session_created", "note"]);
      expect(state.lastSeq).toBe(2);
    }
  });

  it("a write Citus does not delegate (it runs the call on the coordinator) runs as written", async () => {
    const id = randomUUID();
    await clusterWriter().submit(bareSession(id, rows.hostId, rows.serverId));
    const statement = `UPDATE "brain"."sessions" SET metadata = '{"seen": true}'::jsonb WHERE id = $1::uuid RETURNING id`;
    // Citus delegates a call that is the whole query; from a subquery it runs it on the
    // coordinator, where the session's shards are not: the statement goes to Citus as written.
    const answer = await db.sql<{ id: string }[]>`
      SELECT q.id FROM (SELECT * FROM brain.on_session_shards(${id}::uuid, ${statement}, ${[id]}::text[]) AS r(id uuid)
                        OFFSET 0) q`;
    expect(answer).toEqual([{ id }]);
    const [row] = await db.sql<
      { seen: boolean }[]
    >`SELECT (metadata->>'seen')::boolean AS seen FROM sessions WHERE id = ${id}`;
    expect(row?.seen).toBe(true);
  });
});
