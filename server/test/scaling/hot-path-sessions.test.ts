// The hot path touches one session's rows: the road past one Postgres (sessions distributed by
// `session_id`, docs/scaling.md) needs every statement of a turn, a tool call, an emit and an
// approval to be routable by one session. The statements a real server runs for that work are
// recorded off the wire (testkit/statement-recorder.ts) and each one that reads or writes a
// session-scoped table is planned by Postgres: every scan of such a table must be keyed by a
// single session (`session_id = …`, or `id = …` for sessions). What may touch several sessions is
// listed with its reason (testkit/hot-path.ts); anything else fails, naming the statement and the scan.
import { Brain } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { CROSS_SESSION, hotPathWork } from "../../../testkit/hot-path.js";
import { sessionTables } from "../../../testkit/orphans.js";
import {
  type RecordedStatement,
  type StatementRecorder,
  startStatementRecorder,
} from "../../../testkit/statement-recorder.js";
import { scripted } from "../../../testkit/turns.js";

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
  [cond: string]: unknown;
}

const CONDITIONS = ["Index Cond", "Recheck Cond", "Filter", "Join Filter", "Hash Cond", "Merge Cond"];

/** The scans of session-scoped tables not keyed by one session, as "relation: conditions". */
function unkeyedScans(node: PlanNode, sessionTables: Set<string>, out: string[] = []): string[] {
  const relation = node["Relation Name"];
  if (relation && sessionTables.has(relation) && node["Node Type"] !== "ModifyTable") {
    const conds = CONDITIONS.map((c) => node[c]).filter((c): c is string => typeof c === "string");
    const key = relation === "sessions" ? /(^|[^a-z_.])(\w+\.)?id = (?!ANY)/ : /session_id = (?!ANY)/;
    if (!conds.some((c) => key.test(c)))
      out.push(`${relation} (${node["Node Type"]}): ${conds.join(" AND ") || "no condition"}`);
  }
  for (const child of node.Plans ?? []) unkeyedScans(child, sessionTables, out);
  return out;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

let db: TestDatabase;
let recorder: StatementRecorder;
let server: InProcessBrain;
let client: Brain;

beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  recorder = await startStatementRecorder(db.directUrl);
  // The server's every connection through the recorder (no pooler: its statements as they are).
  server = await startBrain({ db: { ...db, url: recorder.through(db.directUrl), serverDirectUrl: undefined } });
  client = new Brain({ url: server.url, token: server.token });
});
afterAll(async () => {
  await client?.close();
  await server?.close();
  await recorder?.close();
  await db?.drop();
});

async function planOf(statement: RecordedStatement): Promise<PlanNode> {
  const [row] = await db.sql.unsafe<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>(
    `EXPLAIN (FORMAT JSON) ${statement.text}`,
    statement.params as never[],
  );
  return row!["QUERY PLAN"][0]!.Plan;
}

describe("the hot path's statements", () => {
  it("each touches one session's rows, or is on the list of cross-session operations", async () => {
    // One turn first, so that what runs once per server (its start, the host's first connection)
    // is not taken for the hot path.
    const warm = await client.sessions.create({ model: scripted({ text: "warm" }) });
    await warm.send("warm");
    recorder.start();
    await hotPathWork(client);
    const recorded = recorder.stop();
    const tables = new Set(["sessions", ...(await sessionTables(db.sql, "brain", { partitions: true }))]);
    const distinct = new Map<string, RecordedStatement>();
    for (const s of recorded) if (!distinct.has(oneLine(s.text))) distinct.set(oneLine(s.text), s);
    const listed = new Set<string>();
    const failures: string[] = [];
    let keyed = 0;
    for (const [text, statement] of distinct) {
      const allowed = CROSS_SESSION.find((c) => c.match.test(text));
      if (allowed) {
        listed.add(allowed.why);
        continue;
      }
      if (!/^\s*(WITH|SELECT|UPDATE|DELETE|INSERT)\b/i.test(text)) continue;
      const unkeyed = unkeyedScans(await planOf(statement), tables);
      if (unkeyed.length > 0) failures.push(`${text.slice(0, 240)}\n    ${unkeyed.join("\n    ")}`);
      else keyed++;
    }
    expect(failures, `statements touching more than one session's rows:\n${failures.join("\n")}`).toEqual([]);
    // The recording saw the hot path: the writer's batches and single-session reads and writes.
    expect(listed).toContain(CROSS_SESSION[0]!.why);
    expect(keyed).toBeGreaterThan(3);
  });

  it("the check finds a statement that reads every session's records", async () => {
    const tables = new Set(["sessions", ...(await sessionTables(db.sql, "brain", { partitions: true }))]);
    const every = await planOf({ text: `SELECT count(*) FROM "brain"."records" WHERE kind = $1`, params: ["x"] });
    const unkeyed = unkeyedScans(every, tables);
    expect(unkeyed.length).toBeGreaterThan(0);
    for (const scan of unkeyed) expect(scan).toMatch(/^records_(default|w\d{8}) /);
    const some = await planOf({
      text: `SELECT seq FROM "brain"."records" WHERE session_id = ANY($1::uuid[])`,
      params: ["{00000000-0000-0000-0000-000000000000}"],
    });
    expect(unkeyedScans(some, tables).length).toBeGreaterThan(0);
    const one = await planOf({
      text: `SELECT seq FROM "brain"."records" WHERE session_id = $1 AND seq > $2`,
      params: ["00000000-0000-0000-0000-000000000000", "0"],
    });
    expect(unkeyedScans(one, tables)).toEqual([]);
  });
});
