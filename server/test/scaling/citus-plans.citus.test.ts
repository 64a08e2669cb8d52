import { Brain } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { CROSS_SESSION, hotPathWork } from "../../../testkit/hot-path.js";
import {
  type RecordedStatement,
  type StatementRecorder,
  startStatementRecorder,
} from "../../../testkit/statement-recorder.js";
import { scripted } from "../../../testkit/turns.js";

// The hot path on a Citus cluster (BRAIN_TEST_CITUS=1), its tables distributed by session: a real
// server runs a text turn, a tool that emits and finishes, an approval, and an end, its statements
// recorded off the wire; Citus then plans each one with its parameters. Each must run as one task
// on one worker (a router plan), unless it is on the list of cross-session operations
// (testkit/hot-path.ts), which may fan out to every shard; none may be refused.

let db: TestDatabase;
let recorder: StatementRecorder;
let server: InProcessBrain;
let client: Brain;

beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  recorder = await startStatementRecorder(db.directUrl);
  server = await startBrain({ db: { ...db, url: recorder.through(db.directUrl), serverDirectUrl: undefined } });
  client = new Brain({ url: server.url, token: server.token });
});
afterAll(async () => {
  await client?.close();
  await server?.close();
  await recorder?.close();
  await db?.drop();
});

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

type Verdict = { tasks: number } | { refused: string };

/** How many tasks Citus's plan of `statement` runs at most in one distributed scan, or its refusal. */
async function verdict(statement: RecordedStatement): Promise<Verdict> {
  try {
    const rows = await db.sql.unsafe<{ "QUERY PLAN": string }[]>(
      `EXPLAIN (COSTS OFF) ${statement.text}`,
      statement.params as never[],
    );
    const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
    return { tasks: Math.max(0, ...[...plan.matchAll(/Task Count: (\d+)/g)].map((m) => Number(m[1]))) };
  } catch (error) {
    return { refused: error instanceof Error ? error.message : String(error) };
  }
}

describe("the hot path's statements on a Citus cluster", () => {
  it("each runs on one worker, or is a listed cross-session operation; none is refused", async () => {
    const warm = await client.sessions.create({ model: scripted({ text: "warm" }) });
    await warm.send("warm");
    recorder.start();
    await hotPathWork(client);
    const recorded = recorder.stop();
    const distinct = new Map<string, RecordedStatement>();
    for (const s of recorded) if (!distinct.has(oneLine(s.text))) distinct.set(oneLine(s.text), s);
    const failures: string[] = [];
    let routed = 0;
    for (const [text, statement] of distinct) {
      if (!/^\s*(WITH|SELECT|UPDATE|DELETE|INSERT)\b/i.test(text)) continue;
      const v = await verdict(statement);
      const listed = CROSS_SESSION.some((c) => c.match.test(text));
      if ("refused" in v) failures.push(`refused (${v.refused}): ${text.slice(0, 240)}`);
      else if (v.tasks > 1 && !listed) failures.push(`${v.tasks} tasks: ${text.slice(0, 240)}`);
      else if (v.tasks === 1) routed++;
    }
    expect(failures, `statements that do not stay on one worker:\n${failures.join("\n")}`).toEqual([]);
    // The recording saw the hot path: the writer's appends and call transitions among them, each
    // sent whole to its session's worker (ops/on-session-shards.ts), which the loop above found
    // planned as one task.
    const delegated = recorded.filter((s) => /^SELECT \* FROM "brain"\."on_session_shards"\(/.test(s.text));
    const inner = delegated.map((s) => String(s.params[1]));
    expect(inner.some((t) => /INSERT INTO "brain"\."records"/.test(t))).toBe(true);
    expect(inner.some((t) => /UPDATE "brain"\."calls" c SET\s+state =/.test(t))).toBe(true);
    expect(routed).toBeGreaterThan(8);
  });

  it("the check finds a statement that fans out, and one Citus refuses", async () => {
    const every = await verdict({ text: `SELECT count(*) FROM "brain"."records" WHERE kind = $1`, params: ["x"] });
    expect(every).toEqual({ tasks: 4 });
    const one = await verdict({
      text: `SELECT seq FROM "brain"."records" WHERE session_id = $1 AND seq > $2`,
      params: ["00000000-0000-0000-0000-000000000000", "0"],
    });
    expect(one).toEqual({ tasks: 1 });
    const refused = await verdict({
      text: `UPDATE "brain"."calls" SET ended_at = clock_timestamp() WHERE session_id = $1`,
      params: ["00000000-0000-0000-0000-000000000000"],
    });
    expect(refused).toMatchObject({ refused: expect.stringContaining("must not be VOLATILE") });
  });
});
