import { Brain } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReplicatedPostgres, startReplicatedPostgres } from "../../../testkit/replicated-postgres.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until, within } from "../../../testkit/wait.js";

// A fail-over to an asynchronous standby that never received the last commits: turns the server
// acknowledged are gone from the promoted database, and the Agentloops that folded them are ahead
// of the journal they now write to. Every session must answer again.

let pg: ReplicatedPostgres;
let server: ServerProcess;
let client: Brain;

beforeAll(async () => {
  pg = await startReplicatedPostgres({ synchronous: false });
  server = await spawnServer({ databaseUrl: pg.bothUrl(), env: { BRAIN_LOG_LEVEL: "warn" }, startTimeoutMs: 60_000 });
  client = new Brain({ url: server.url, token: server.token });
}, 180_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await server?.kill().catch(() => {});
  await pg?.destroy();
});

describe("a fail-over to an asynchronous standby that lost acknowledged turns", () => {
  it("leaves no session unanswered", async () => {
    const answers = Array.from({ length: 10 }, (_, i) => `answer ${i}`);
    const sessions = await Promise.all(
      Array.from({ length: 4 }, () => client.sessions.create({ model: scripted(...answers), tools: [] })),
    );
    for (const s of sessions) await s.send("one");
    await until("the standby to replay the first turns", async () => {
      const [row] = await pg.primary<{ caught: boolean }[]>`
        SELECT replay_lsn >= pg_current_wal_lsn() AS caught FROM pg_stat_replication`;
      return row?.caught === true;
    });
    await pg.cutStandby();
    // Acknowledged by the primary alone: lost with it.
    for (const s of sessions) await s.send("two");
    await pg.killPrimary();
    await pg.promote();
    const [lost] = await pg.standby<{ n: number }[]>`
      SELECT count(*)::int AS n FROM brain.records WHERE kind = 'user_message' AND payload->>'text' = 'two'`;
    expect(lost!.n).toBe(0);
    const replies = await within(
      Promise.all(sessions.map((s) => s.send("three"))),
      "every session to answer after the fail-over",
      60_000,
    );
    expect(replies.every((r) => typeof r === "string" && r.startsWith("answer"))).toBe(true);
  }, 180_000);
});
