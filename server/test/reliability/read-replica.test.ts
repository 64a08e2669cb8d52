import { Brain } from "@aexhq/brain";
import type { JournalEvent } from "@aexhq/brain-contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brain as brainCli, emptyDataDir } from "../../../cli/test/support.js";
import { parseExposition, sampleValue } from "../../../testkit/metrics.js";
import { type ReplicatedPostgres, startReplicatedPostgres } from "../../../testkit/replicated-postgres.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

// BRAIN_READ_URL names a streaming standby: the console and the CLI's listings read it, event
// streams read their backlog there and their tail on the primary, and the lag is shown. The test
// pauses the standby's replay so that what it shows is behind what the primary has.

let pg: ReplicatedPostgres;
let server: ServerProcess;
let client: Brain;

beforeAll(async () => {
  pg = await startReplicatedPostgres();
  server = await spawnServer({
    databaseUrl: pg.primaryUrl,
    env: { BRAIN_LOG_LEVEL: "warn", BRAIN_READ_URL: pg.standbyUrl },
    startTimeoutMs: 60_000,
  });
  client = new Brain({ url: server.url, token: server.token });
}, 180_000);

afterAll(async () => {
  if (pg) await pg.standby`SELECT pg_wal_replay_resume()`.catch(() => {});
  await client?.close().catch(() => {});
  await server?.stop().catch(() => {});
  await pg?.destroy();
});

const get = async (path: string) => {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.token}` } });
  expect(res.status).toBe(200);
  return res;
};
const events = async (sessionId: string) =>
  (await (await get(`/v1/sessions/${sessionId}/events`)).text())
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as JournalEvent);
const lag = async () => {
  const samples = parseExposition(await (await get("/metrics")).text());
  return { bytes: sampleValue(samples, "brain_read_replica_lag_bytes") };
};
const replayed = () =>
  until(
    "the standby to replay what the primary wrote",
    async () => {
      const [row] = await pg.primary<{ caught: boolean }[]>`
        SELECT replay_lsn >= pg_current_wal_lsn() AS caught FROM pg_stat_replication`;
      return row?.caught === true;
    },
    30_000,
  );
/** Scans of the journal's partitions the standby itself ran (its statistics are its own). */
const journalScansOnStandby = async () => {
  const [row] = await pg.standby<{ n: number }[]>`
    SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)::int AS n FROM pg_stat_user_tables
    WHERE schemaname = 'brain' AND relname ~ '^records_(default|w[0-9]{8})$'`;
  return row!.n;
};

describe("BRAIN_READ_URL, a replica for reads that may lag", () => {
  it("serves an event stream's backlog up to where the replica ends, the rest from the primary", async () => {
    const session = await client.sessions.create({ model: scripted("one", "two", "three"), tools: [] });
    await session.send("first");
    await replayed();
    await pg.standby`SELECT pg_wal_replay_pause()`;
    try {
      await session.send("second");
      await session.send("third");
      const [end] = await pg.primary<{ last: number }[]>`
        SELECT last_seq::int AS last FROM brain.sessions WHERE id = ${session.id}`;
      const [behind] = await pg.standby<{ last: number }[]>`
        SELECT last_seq::int AS last FROM brain.sessions WHERE id = ${session.id}`;
      expect(behind!.last).toBeLessThan(end!.last);

      const scans = await journalScansOnStandby();
      const seen = await events(session.id);
      expect(seen.map((e) => e.sequence)).toEqual(Array.from({ length: end!.last }, (_, i) => i + 1));
      expect(seen.filter((e) => e.kind === "user_message").map((e) => (e.payload as { text: string }).text)).toEqual([
        "first",
        "second",
        "third",
      ]);
      // The backlog's first pages came from the standby (statistics arrive within a second).
      await until(
        "the standby to count the stream's reads",
        async () => (await journalScansOnStandby()) > scans,
        10_000,
      );
    } finally {
      await pg.standby`SELECT pg_wal_replay_resume()`;
    }
  }, 60_000);

  it("shows the console what the replica has, and its lag in /metrics and brain doctor", async () => {
    await replayed();
    await pg.standby`SELECT pg_wal_replay_pause()`;
    let resumed = false;
    try {
      const session = await client.sessions.create({ model: scripted("hi"), tools: [] });
      await session.send("hello");
      const listed = async () => {
        const body = (await (await get("/v1/console/sessions?limit=100")).json()) as { sessions: { id: string }[] };
        return body.sessions.some((s) => s.id === session.id);
      };
      // Written on the primary, not yet replayed: the console does not show it.
      expect(await listed()).toBe(false);
      await until("the lag to show in /metrics", async () => (await lag()).bytes > 0, 15_000);
      const run = await brainCli(["doctor", "--json"], {
        DATABASE_URL: pg.primaryUrl,
        BRAIN_READ_URL: pg.standbyUrl,
        BRAIN_DATA_DIR: emptyDataDir(),
      });
      const report = JSON.parse(run.output) as { checks: { check: string; status: string; detail: string }[] };
      expect(report.checks.find((c) => c.check === "read replica")).toMatchObject({
        status: "ok",
        detail: expect.stringMatching(/^a standby, \d+ bytes of WAL behind/),
      });

      await pg.standby`SELECT pg_wal_replay_resume()`;
      resumed = true;
      await until("the console to show the session once replayed", listed, 30_000);
      await until("the lag to go back to 0", async () => (await lag()).bytes === 0, 15_000);
    } finally {
      if (!resumed) await pg.standby`SELECT pg_wal_replay_resume()`;
    }
  }, 90_000);

  it("brain calls ls reads the replica alone", async () => {
    // The primary's URL points nowhere: only a read of the replica can answer.
    const run = await brainCli(["calls", "ls", "--json"], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere",
      BRAIN_READ_URL: pg.standbyUrl,
      BRAIN_DATA_DIR: emptyDataDir(),
    });
    expect(run.code, run.output).toBe(0);
    expect(Array.isArray(JSON.parse(run.output))).toBe(true);
  }, 60_000);

  it("never writes to the replica: every session and call lives on the primary", async () => {
    const [row] = await pg.standby<{ writes: number }[]>`
      SELECT count(*)::int AS writes FROM pg_stat_activity
      WHERE application_name IN ('brain-server', 'brain-writer', 'brain-listener')`;
    expect(row!.writes).toBe(0);
  });
});
