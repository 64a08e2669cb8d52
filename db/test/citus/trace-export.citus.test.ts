import { randomUUID } from "node:crypto";
import {
  advanceTraceCursors,
  observedCalls,
  openStarts,
  traceBacklog,
  traceContext,
  traceRecordsAfter,
} from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";

// The trace exporter's reads and its cursor on a Citus cluster (its end-to-end tests, minutes
// long, run on one Postgres): what it reads of a session's journal, and a cursor that moves
// forward only.

let db: TestDatabase;
const id = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO sessions (id, model, tools, last_seq) VALUES (${id}, '{}', '[]', 6)`;
  await db.sql`
    INSERT INTO records (session_id, seq, kind, payload) VALUES
      (${id}, 1, 'activation_started', '{}'),
      (${id}, 2, 'tool_call_started', '{"activation": 1, "tool": "t"}'),
      (${id}, 3, 'progress', '{"call": 2}'),
      (${id}, 4, 'tool_call_ended', '{"call": 2}'),
      (${id}, 5, 'activation_ended', '{"activation": 1}'),
      (${id}, 6, 'model_call_started', '{}')`;
});
afterAll(async () => {
  await db?.drop();
});

const seqs = (records: { seq: number }[]) => records.map((r) => Number(r.seq));

describe("the trace exporter on a cluster", () => {
  it("reads a session's backlog, records, context, observations and open starts", async () => {
    expect(await traceBacklog(db.sql, 10, [id])).toEqual([{ sessionId: id, exportedSeq: 0, lastSeq: 6 }]);
    expect(seqs(await traceRecordsAfter(db.sql, id, 0, 10))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(seqs(await traceContext(db.sql, id, [1], [2], 5))).toEqual([1, 3]);
    expect(await observedCalls(db.sql, id, [4])).toEqual([{ seq: 4, call: 2, activation: 1 }]);
    expect(seqs(await openStarts(db.sql, id, 6))).toEqual([6]);
  });

  it("moves a cursor forward, never back", async () => {
    await advanceTraceCursors(db.sql, [{ sessionId: id, seq: 5 }]);
    await advanceTraceCursors(db.sql, [{ sessionId: id, seq: 3 }]);
    expect(await traceBacklog(db.sql, 10, [id])).toEqual([{ sessionId: id, exportedSeq: 5, lastSeq: 6 }]);
    // No cursor for a session that is not there.
    await advanceTraceCursors(db.sql, [{ sessionId: randomUUID(), seq: 1 }]);
    const [n] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trace_cursors`;
    expect(n?.n).toBe(1);
  });
});
