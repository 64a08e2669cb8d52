import { Brain, type BrainError, tool } from "@aexhq/brain";
import { connect } from "@aexhq/brain-db/connect";
import { type CitusCluster, joinCitusDatabase, startCitusCluster } from "@aexhq/brain-db/embedded";
import { migrate, placeOnCitus } from "@aexhq/brain-db/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { CHECKS } from "../../../chaos/src/invariants.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import type { TestDatabase } from "../../../testkit/database.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

// A worker node of the Citus cluster restarted under load: turns with tool calls run on sessions
// spread over both workers while one worker goes down (fast shutdown, a second down) and comes
// back. While it is down, requests are refused (database_unavailable: nothing written, retry) and
// turns end model_call_lost; nothing is lost or half-written, turns go on once it is back, and the
// journal's invariants (chaos/src/invariants.ts: dense sequences, one call per start, one terminal
// record per ended call, every activation and model call ended once) hold once the load stops.
// A cluster of the file's own: the leg's shared one must not be restarted under other files.

/** The chaos run's checks that read only Brain's own tables (not the run's records of what it saw). */
const JOURNAL_CHECKS = CHECKS.filter((c) => !c.sql.includes("chaos."));

let cluster: CitusCluster;
let db: TestDatabase;
let brain: InProcessBrain;
let client: Brain;

beforeAll(async () => {
  cluster = await startCitusCluster({ shardCount: 4 });
  const name = "brain_restart";
  const admin = connect(cluster.url, { schema: "public", max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end({ timeout: 1 });
  await joinCitusDatabase(cluster.url, cluster.workerUrls, name);
  const url = new URL(cluster.url);
  url.pathname = `/${name}`;
  const sql = connect(url.toString(), { schema: "brain", searchPath: true, max: 4 });
  await migrate(sql, "brain");
  await placeOnCitus(sql, "brain");
  db = {
    url: url.toString(),
    directUrl: url.toString(),
    serverDirectUrl: undefined,
    name,
    schema: "brain",
    sql,
    drop: () => sql.end({ timeout: 1 }),
  };
  brain = await startBrain({ db });
  client = new Brain({ url: brain.url, token: brain.token });
}, 120_000);
afterAll(async () => {
  await client?.close();
  await brain?.close();
  await db?.drop();
  await cluster?.destroy();
});

const echo = tool({
  name: "echo",
  description: "Echoes.",
  input: z.object({ n: z.number() }),
  run: async (input, ctx) => {
    await ctx.emit("progress", { n: input.n });
    return ctx.finish({ n: input.n });
  },
});

/** A turn's answer, or its error's code (a turn not ended within 30 s: a client gives up). */
function answer(turn: Promise<string>): Promise<{ text: string } | { code: string }> {
  return Promise.race([
    turn.then(
      (text) => ({ text }),
      (error: BrainError) => ({ code: error.code }),
    ),
    new Promise<{ code: string }>((done) => setTimeout(done, 30_000, { code: "no answer in 30 s" })),
  ]);
}

/** Turns on one session until `stop`: each a tool call and an answer. */
async function turns(stop: { now: boolean }, answered: string[], failed: string[]): Promise<void> {
  const steps = Array.from({ length: 200 }, (_, n) => [
    { toolCalls: [{ name: "echo", input: { n } }] },
    { text: `t${n}` },
  ]);
  const session = await client.sessions.create({ model: scripted(...steps.flat()), tools: [echo()] });
  while (!stop.now) {
    // A turn refused or cut while the worker is down is tried again, as a client would.
    const result = await answer(session.send("go"));
    if ("text" in result) answered.push(result.text);
    else {
      failed.push(result.code);
      // A client backs off before it tries again; the load needs no more.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The journal invariants broken now, each with a sample of its rows. */
async function violations(): Promise<string[]> {
  const failing: string[] = [];
  await db.sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    for (const check of JOURNAL_CHECKS) {
      const rows = await tx.unsafe(check.sql);
      if (rows.length > 0) failing.push(`${check.name}: ${JSON.stringify(rows.slice(0, 2))}`);
    }
  });
  return failing;
}

describe("a Citus worker restarted under load", () => {
  it("loses and half-writes nothing: every journal invariant holds, and turns go on after it", async () => {
    const stop = { now: false };
    const answered: string[] = [];
    const failed: string[] = [];
    const load = Promise.all(Array.from({ length: 6 }, () => turns(stop, answered, failed)));
    await until("turns before the restart", async () => answered.length >= 6, 60_000);
    await cluster.restartWorker(0, "fast", 1_000);
    const after = answered.length;
    await until("turns after the restart", async () => answered.length >= after + 12, 90_000);
    stop.now = true;
    await load;
    // The outage was felt, and told as what it is (docs/errors.md): a request refused with
    // nothing written, or a turn whose model call's end could not be written, ended
    // model_call_lost (its outcome unknown, never replayed); or a turn the client gave up on.
    expect(failed.length).toBeGreaterThan(0);
    for (const code of new Set(failed)) {
      expect(["database_unavailable", "model_call_lost", "no answer in 30 s"]).toContain(code);
    }
    // The server's sweeps and deadlines settle what the outage left open.
    await until("the journal's invariants", async () => (await violations()).length === 0, 60_000).catch(() => {});
    expect(await violations()).toEqual([]);
    // Both workers held sessions of the load.
    const [spread] = await db.sql<{ nodes: number }[]>`
      SELECT count(DISTINCT nodeport)::int AS nodes FROM citus_shards
      WHERE table_name = 'brain.sessions'::regclass
        AND shardid IN (SELECT get_shard_id_for_distribution_column('brain.sessions', id) FROM brain.sessions)`;
    expect(spread?.nodes).toBe(2);
  }, 300_000);
});
