import { randomUUID } from "node:crypto";
import { channelFor } from "@aexhq/brain-db/commits";
import { bindSchema } from "@aexhq/brain-db/connect";
import { appendUnchecked, endOverdueCalls, rel, transitionCall, type UncheckedRecord } from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import type Postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession } from "../../testkit/session-rows.js";

/** Brain's copy of the driver (db/driver/, applied by db/src/driver/patch.ts), as connect() loads it. */
const { default: postgres } = (await import(new URL("../dist/driver/postgres/index.js", import.meta.url).href)) as {
  default: typeof Postgres;
};

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
      WHERE statement LIKE '%write_inputs%'
        AND statement NOT LIKE '%pg_prepared_statements%'`.then((rows) => [...rows]),
  });
}

const started = (activation: number): UncheckedRecord => ({
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
        appendUnchecked(id, [
          { kind: "activation_started", payload: { cause: "user_message" } },
          { kind: "model_call_started", payload: { origin: { type: "agentloop" }, activation: rel(-1) } },
        ]),
      );
      const activation = turn.records[0]!.seq;
      const call = await writer.submit(
        appendUnchecked(id, [{ kind: "model_call_ended", payload: { call: activation + 1 } }, started(activation)]),
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

/** One plan node of EXPLAIN (FORMAT JSON), as far as these tests read it. */
interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
}

/** A statement as sent: its text and parameters. */
interface Statement {
  text: string;
  params: unknown[];
}

/**
 * The statement a write sends, captured on a connection of its own (postgres.js's debug hook),
 * in a transaction that is rolled back: its text and parameters, exactly as the writer sends them.
 */
async function statementOf(
  op: { run(tx: never): Promise<unknown> },
  pattern = /write_inputs|jsonb_to_recordset/,
): Promise<Statement> {
  let seen: Statement | undefined;
  const sql = postgres(db.url, {
    max: 1,
    onnotice: () => {},
    connection: { search_path: "brain" },
    debug: (_c, text, params) => {
      if (pattern.test(text)) seen = { text, params };
    },
  });
  bindSchema(sql, "brain");
  try {
    await sql
      .begin(async (tx) => {
        await op.run(tx as never);
        throw new Error("rolled back");
      })
      .catch((e: Error) => {
        if (e.message !== "rolled back") throw e;
      });
  } finally {
    await sql.end();
  }
  if (!seen) throw new Error("the write sent no merged statement");
  return seen;
}

/**
 * How Postgres runs the statement once prepared, on its generic plan (or, with `custom`, on the
 * plan made for these parameters, with sequential scans priced out so that the plan shows whether
 * an index can serve at all, whatever the table's size): every node that reads a table or index.
 */
async function planScans(statement: Statement, mode: "generic" | "custom" = "generic"): Promise<PlanNode[]> {
  const scans: PlanNode[] = [];
  await db.sql
    .begin(async (tx) => {
      await tx.unsafe(`SET LOCAL plan_cache_mode = force_${mode}_plan`);
      if (mode === "custom") await tx`SET LOCAL enable_seqscan = off`;
      const name = `hot_${randomUUID().replaceAll("-", "")}`;
      await tx.unsafe(`PREPARE ${name} AS ${statement.text}`);
      // As literals: EXPLAIN EXECUTE takes no parameters of its own.
      const literals = statement.params
        .map((p) => (p === null ? "NULL" : `'${String(p).replaceAll("'", "''")}'`))
        .join(", ");
      const [row] = await tx.unsafe<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>(
        `EXPLAIN (FORMAT JSON) EXECUTE ${name}(${literals})`,
      );
      await tx.unsafe(`DEALLOCATE ${name}`);
      const walk = (n: PlanNode) => {
        if ((n["Relation Name"] || n["Index Name"]) && n["Node Type"] !== "ModifyTable") scans.push(n);
        for (const c of n.Plans ?? []) walk(c);
      };
      walk(row!["QUERY PLAN"][0]!.Plan);
      throw new Error("rolled back");
    })
    .catch((e: Error) => {
      if (e.message !== "rolled back") throw e;
    });
  return scans;
}

describe("the hot path's statements, on their generic plan", () => {
  // A fresh database whose tables were never analysed, as every new deployment starts: the
  // planner's estimates are at their least informed, and the plan it makes now is kept for the
  // writer connection's life while the tables grow. A session with many calls, most ended: their
  // rows share the session's key prefix, and their entries stay in the partial indexes of open
  // calls until a vacuum.
  let id: string;
  let lastCall: number;

  beforeAll(async () => {
    id = randomUUID();
    await writer.submit(bareSession(id, hostId, serverId));
    for (let i = 0; i < 3; i++) await writer.submit(bareSession(randomUUID(), hostId, serverId));
    const turn = await writer.submit(
      appendUnchecked(id, [{ kind: "activation_started", payload: { cause: "user_message" } }]),
    );
    const activation = turn.records[0]!.seq;
    for (let i = 0; i < 40; i++) {
      const call = await writer.submit(appendUnchecked(id, [started(activation)]));
      lastCall = call.records[0]!.seq;
      if (i < 39) {
        await writer.submit(
          transitionCall({ sessionId: id, seq: lastCall, hostId }, { type: "finish", outcome: { status: "ok" } }),
        );
      }
    }
  });

  it("a finish probes its call by the whole primary key and its session by id, never a partial index", async () => {
    const scans = await planScans(
      await statementOf(
        transitionCall({ sessionId: id, seq: lastCall, hostId }, { type: "finish", outcome: { status: "ok" } }),
      ),
    );
    // The calls table is partitioned (migration 0023): a call is probed in its partition's own key.
    const calls = scans.filter((n) => /^calls_(default|w\d{8})$/.test(n["Relation Name"] ?? ""));
    expect(calls.length).toBeGreaterThan(0);
    for (const n of calls) {
      expect(n["Index Name"], JSON.stringify(n)).toBe(`${n["Relation Name"]}_pkey`);
      expect(n["Index Cond"], JSON.stringify(n)).toMatch(/session_id = .*seq = /);
    }
    for (const n of scans.filter((s) => s["Relation Name"] === "sessions")) {
      expect(n["Index Name"], JSON.stringify(n)).toBe("sessions_pkey");
    }
  });

  it("an append probes its session by id, whatever the batch holds", async () => {
    const scans = await planScans(
      await statementOf(
        appendUnchecked(id, [
          { kind: "model_call_started", payload: { origin: { type: "agentloop" }, activation: 1 } },
        ]),
      ),
    );
    const sessions = scans.filter((n) => n["Relation Name"] === "sessions");
    expect(sessions.length).toBeGreaterThan(0);
    for (const n of sessions) expect(n["Index Name"], JSON.stringify(n)).toBe("sessions_pkey");
    expect(scans.filter((n) => n["Node Type"].includes("Seq Scan"))).toEqual([]);
  });
});

describe("the index of open calls by deadline", () => {
  it("holds no call without a deadline, and the overdue sweep finds the calls that have one through it", async () => {
    const sid = randomUUID();
    await writer.submit(bareSession(sid, hostId, serverId));
    const turn = await writer.submit(
      appendUnchecked(sid, [{ kind: "activation_started", payload: { cause: "user_message" } }]),
    );
    const activation = turn.records[0]!.seq;
    // Open calls without a deadline, the default (and every call this file wrote before).
    await writer.submit(
      appendUnchecked(
        sid,
        Array.from({ length: 30 }, () => started(activation)),
      ),
    );
    const [size] = await db.sql<{ pages: number }[]>`
      SELECT (pg_relation_size('calls_default_open_by_deadline') / current_setting('block_size')::int)::int AS pages`;
    // Its metapage alone: not one entry was ever written (an entry per call would need a leaf page).
    expect(size!.pages).toBe(1);

    const overdue = started(activation);
    overdue.call = { ...overdue.call!, deadlineAt: Date.now() - 1_000 };
    const written = await writer.submit(appendUnchecked(sid, [overdue]));
    const ended = await writer.submit(endOverdueCalls());
    expect(ended.map((c) => [c.sessionId, c.seq])).toEqual([[sid, written.records[0]!.seq]]);

    // The sweep's statement, planned for its parameters as Postgres plans it, reads the index.
    const scans = await planScans(
      await statementOf(endOverdueCalls(), /UPDATE "brain"."calls" SET state = 'ended'/),
      "custom",
    );
    expect(scans.map((n) => n["Index Name"])).toContain("calls_default_open_by_deadline");
  });
});
