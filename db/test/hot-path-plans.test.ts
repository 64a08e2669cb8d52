import { randomUUID } from "node:crypto";
import { appendRecords, channelFor, JournalWriter, type NewRecord, rel, transitionCall } from "@aexhq/brain-db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession } from "../../testkit/session-rows.js";

// The hot path's statements are prepared once per connection and must then run on Postgres's
// generic plan: a statement that is planned afresh at every execution costs the database about as
// much planning as executing (0.5 ms an append under tool_throughput, before this was pinned).
// Postgres plans the first five executions for their parameters and then keeps the generic plan
// unless a custom one is cheaper, which happens when a parameter lets the planner fold part of the
// statement away (a boolean in a CASE did). pg_prepared_statements counts both, per connection:
// the writer's own connection is read through a write of its own.

let db: TestDatabase;
let writer: JournalWriter;
const serverId = randomUUID();
const hostId = randomUUID();
const RUNS = 12;

beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
  writer = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID() });
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

interface PlanCount {
  statement: string;
  generic_plans: number;
  custom_plans: number;
}

/** The plans counted on the writer's connection for its merged statements (one text per kind). */
async function writerPlans(): Promise<PlanCount[]> {
  return writer.submit({
    keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
    run: (tx) =>
      tx<PlanCount[]>`
      SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements
      WHERE statement LIKE '%jsonb_to_recordset%'
        AND statement NOT LIKE '%pg_prepared_statements%'`.then((rows) => [...rows]),
  });
}

const started = (activation: number): NewRecord => ({
  kind: "tool_call_started",
  payload: { tool: "t", input: { n: 1 }, activation },
  call: { tool: "t", activationSeq: activation, hostId, connectionId: null, state: "running", deadlineAt: null },
});

describe("the hot path's statements", () => {
  it("run on their generic plan after the first executions, in each variant a turn uses", async () => {
    for (let i = 0; i < RUNS; i++) {
      const id = randomUUID();
      await writer.submit(bareSession(id, hostId, serverId));
      // The two appends of a tool turn: a model call (which charges the budget) with a relative
      // reference, and a tool call without either; then a finish on that call.
      const turn = await writer.submit(
        appendRecords(id, [
          { kind: "activation_started", payload: { cause: "user_message" } },
          { kind: "model_call_started", payload: { origin: { type: "agentloop" }, activation: rel(-1) } },
        ]),
      );
      const activation = turn.records[0]!.seq;
      const call = await writer.submit(
        appendRecords(id, [{ kind: "model_call_ended", payload: { call: activation + 1 } }, started(activation)]),
      );
      const seq = call.records[1]!.seq;
      const ended = await writer.submit(
        transitionCall({ sessionId: id, seq, hostId }, { type: "finish", outcome: { status: "ok" } }),
      );
      expect(ended.seq).toBe(seq + 2);
    }
    const plans = await writerPlans();
    // The append with and without its budget part, and the transition: three texts at least.
    expect(plans.length).toBeGreaterThanOrEqual(3);
    for (const p of plans) {
      const runs = p.generic_plans + p.custom_plans;
      expect(runs, p.statement.slice(0, 120)).toBeGreaterThanOrEqual(RUNS);
      expect(p.custom_plans, p.statement.slice(0, 120)).toBeLessThanOrEqual(5);
    }
  });
});
