import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import type { Sql } from "@aexhq/brain-db/connect";
import { appendUnchecked } from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
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
} from "../../testkit/merge-script.js";
import { bareSession } from "../../testkit/session-rows.js";

// Appends and call transitions of different sessions in one batch share a statement
// (db/src/writer/merge.ts). These tests run the same writes twice, merged into one batch and one by
// one, and require the journals, calls and budgets to come out identical: merging may change the
// number of statements and nothing else.

let db: TestDatabase;
let rows: ScriptRows;
const writers: JournalWriter[] = [];

function writer(sql: Sql): JournalWriter {
  const w = new JournalWriter(sql, { channel: channelFor("brain"), origin: randomUUID() });
  writers.push(w);
  return w;
}

const newSession = (id: string) => bareSession(id, rows.hostId, rows.serverId);

beforeAll(async () => {
  db = await createTestDatabase({ max: 6 });
  rows = scriptRows();
  await insertScriptRows(db.sql, rows);
});
afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()));
  await db?.drop();
});

describe("writes merged into one statement per kind", () => {
  it("journals exactly what the same writes one by one journal, in fewer statements", async () => {
    const w = writer(db.sql);
    const merged = await prepareSessions(w, rows);
    const single = await prepareSessions(w, rows);

    const before = { ...w.stats };
    const mergedResults = await asOneBatch(w, script(merged, rows));
    expect(w.stats.batches - before.batches).toBe(2);
    const writes = w.stats.writes - before.writes - 1;
    const statements = w.stats.statements - before.statements - 1;
    expect(writes).toBe(11);
    // Rounds: a1 b1 c1 | b2 a2 | b3 a3 | a4 b4 | a5 … merged by kind within each round.
    expect(statements).toBeLessThan(writes);
    expect(w.stats.merged - before.merged).toBe(1);
    expect(w.stats.fallbacks).toBe(before.fallbacks);

    const singleResults: PromiseSettledResult<unknown>[] = [];
    for (const op of script(single, rows)) {
      singleResults.push(await w.submit(op).then((value) => ({ status: "fulfilled" as const, value })));
    }
    expect(comparable(mergedResults)).toEqual(comparable(singleResults));
    for (const key of ["a", "b", "c"] as const) {
      expect(await stateOf(db.sql, merged[key])).toEqual(await stateOf(db.sql, single[key]));
    }
    await expectScriptOutcome(db.sql, merged, mergedResults);
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
