import { randomUUID } from "node:crypto";
import { Brain, tool } from "@aexhq/brain";
import { prune } from "@aexhq/brain-db/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type SpawnedBrain, spawnBrain } from "../../../testkit/brain.js";
import { orphanRows } from "../../../testkit/orphans.js";
import { spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const DAY = 86_400;
let brain: SpawnedBrain;
let client: Brain;
beforeAll(async () => {
  // Background retention off: this file drives prune itself, then checks the background job.
  brain = await spawnBrain({ env: { BRAIN_RETENTION_DAYS: "0" } });
  client = new Brain({ url: brain.url, token: brain.token });
});
afterAll(async () => {
  await client?.close();
  await brain?.close();
});

/** A tool that reports progress many times, so its turn writes while the pruner runs. */
const work = tool({
  name: "work",
  description: "Emits progress, then returns.",
  input: z.object({ n: z.number() }),
  run: async ({ n }, ctx) => {
    for (let i = 0; i < n; i++) await ctx.emit("progress", { i });
    return { done: n };
  },
});
const twoCalls = {
  toolCalls: [
    { name: "work", input: { n: 15 } },
    { name: "work", input: { n: 15 } },
  ],
};

async function endedSession(daysAgo: number): Promise<string> {
  const s = await client.sessions.create({ model: scripted(twoCalls, { text: "old" }), tools: [work()] });
  expect(await s.send("go")).toBe("old");
  await s.end();
  await brain.db.sql`UPDATE sessions SET ended_at = now() - make_interval(days => ${daysAgo}) WHERE id = ${s.id}`;
  return s.id;
}

async function rowsOf(ids: string[]) {
  const [r] = await brain.db.sql<{ sessions: number; records: number; calls: number }[]>`
    SELECT (SELECT count(*)::int FROM sessions WHERE id = ANY(${ids}::uuid[])) AS sessions,
           (SELECT count(*)::int FROM records WHERE session_id = ANY(${ids}::uuid[])) AS records,
           (SELECT count(*)::int FROM calls WHERE session_id = ANY(${ids}::uuid[])) AS calls`;
  return r!;
}

describe("retention", () => {
  it("prunes old ended sessions in batches while live sessions' turns run, and never touches a live session", async () => {
    const old = [];
    for (let i = 0; i < 5; i++) old.push(await endedSession(40));
    const recent = await endedSession(1);
    const oldRows = await rowsOf(old);
    expect(oldRows.calls).toBe(10);

    // Live sessions made to look ancient: a pruner keyed on age alone would take them.
    const live = [];
    for (let i = 0; i < 3; i++) {
      live.push(
        await client.sessions.create({
          model: scripted(twoCalls, { text: "one" }, twoCalls, { text: "two" }),
          tools: [work()],
        }),
      );
    }
    const liveIds = live.map((s) => s.id);
    await brain.db.sql`UPDATE sessions SET created_at = now() - interval '400 days' WHERE id = ANY(${liveIds}::uuid[])`;
    await brain.db
      .sql`UPDATE records SET created_at = now() - interval '400 days' WHERE session_id = ANY(${liveIds}::uuid[])`;

    // Prune in batches of 2 sessions and 7 records, again and again, for as long as the live turns run.
    let done = false;
    let passes = 0;
    let prunedRecords = 0;
    const pruning = (async () => {
      while (!done || passes < 2) {
        const counts = await prune(brain.db.sql, "brain", {
          olderThanSeconds: 30 * DAY,
          batch: 2,
          recordsBatch: 7,
          wait: true,
        });
        prunedRecords += counts?.records ?? 0;
        passes++;
      }
    })();
    const turns = live.map(async (s) => [await s.send("first"), await s.send("second")]);
    const answers = await Promise.all(turns).finally(() => {
      done = true;
    });
    await pruning;
    expect(answers).toEqual(live.map(() => ["one", "two"]));
    expect(passes).toBeGreaterThanOrEqual(2);

    expect(await rowsOf(old)).toEqual({ sessions: 0, records: 0, calls: 0 });
    // Nor anything else under them, in any table (the hot tables have no foreign key: 0014).
    expect(await orphanRows(brain.db.sql)).toEqual({});
    // The journals went in chunks of 7 records before their sessions.
    expect(prunedRecords).toBe(oldRows.records);
    const kept = await rowsOf([recent]);
    expect(kept.sessions).toBe(1);
    expect(kept.calls).toBe(2);
    // Every live session's journal is whole: dense from 1 to last_seq, all four calls ended ok.
    for (const id of liveIds) {
      const [s] = await brain.db.sql<{ last_seq: number; n: number; max: number; calls: number; ok: number }[]>`
        SELECT s.last_seq::int,
               (SELECT count(*)::int FROM records r WHERE r.session_id = s.id) AS n,
               (SELECT max(seq)::int FROM records r WHERE r.session_id = s.id) AS max,
               (SELECT count(*)::int FROM calls c WHERE c.session_id = s.id) AS calls,
               (SELECT count(*)::int FROM calls c WHERE c.session_id = s.id AND c.outcome->>'status' = 'ok') AS ok
        FROM sessions s WHERE s.id = ${id}`;
      expect(s).toBeDefined();
      expect(s!.n).toBe(s!.last_seq);
      expect(s!.max).toBe(s!.last_seq);
      expect([s!.calls, s!.ok]).toEqual([4, 4]);
      // The session_created record (seq 1) that was backdated is still there.
      const [first] = await brain.db.sql`SELECT kind FROM records WHERE session_id = ${id} AND seq = 1`;
      expect(first?.kind).toBe("session_created");
    }
  });

  it("bounds the other tables: stopped servers, closed connections, idle replicas, idempotency keys, unused components", async () => {
    const sql = brain.db.sql;
    const [host] = await sql<{ id: string }[]>`SELECT id FROM hosts LIMIT 1`;
    const oldServer = randomUUID();
    const recentServer = randomUUID();
    await sql`INSERT INTO servers (id, started_at, heartbeat_at, stopped_at) VALUES
      (${oldServer}, now() - interval '50 days', now() - interval '40 days', now() - interval '40 days'),
      (${recentServer}, now() - interval '2 days', now() - interval '1 day', now() - interval '1 day')`;
    const oldConn = randomUUID();
    const recentConn = randomUUID();
    await sql`INSERT INTO host_connections (id, host_id, server_id, opened_at, closed_at) VALUES
      (${oldConn}, ${host!.id}, ${oldServer}, now() - interval '41 days', now() - interval '40 days'),
      (${recentConn}, ${host!.id}, ${recentServer}, now() - interval '2 days', now() - interval '1 day')`;
    await sql`INSERT INTO idempotency_keys (scope, key_hash, request_hash, response, created_at) VALUES
      ('test', '\\x01', '\\x00', '{}', now() - interval '25 hours'),
      ('test', '\\x02', '\\x00', '{}', now() - interval '1 hour')`;
    const unused = "a".repeat(64);
    const used = "b".repeat(64);
    const fresh = "c".repeat(64);
    await sql`INSERT INTO components (sha256, bytes, size, wit, created_at) VALUES
      (${unused}, '\\x00', 1, '', now() - interval '40 days'),
      (${used}, '\\x00', 1, '', now() - interval '40 days'),
      (${fresh}, '\\x00', 1, '', now())`;
    // An ended session within the window that places the `used` component keeps it.
    await sql`INSERT INTO sessions (id, status, model, tools, ended_at) VALUES
      (${randomUUID()}, 'ended', '{}', ${sql.json([{ implementation: { sha256: used } }])}, now())`;

    const oldReplica = randomUUID();
    const recentReplica = randomUUID();
    await sql`INSERT INTO host_replicas (id, host_id, token_hash, tools, created_at) VALUES
      (${oldReplica}, ${host!.id}, '\\x00', '[]', now() - interval '40 days'),
      (${recentReplica}, ${host!.id}, '\\x00', '[]', now() - interval '40 days')`;
    // The recent one was connected yesterday.
    await sql`INSERT INTO host_connections (id, host_id, server_id, replica_id, opened_at, closed_at) VALUES
      (${randomUUID()}, ${host!.id}, ${recentServer}, ${recentReplica}, now() - interval '2 days', now() - interval '1 day')`;

    // Hosts: one abandoned long ago, one as old but with a session (ended within the window), one
    // as old but connected yesterday, one new.
    const [abandoned, withSession, connected, fresher] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await sql`INSERT INTO hosts (id, token_hash, created_at, last_connected_at) VALUES
      (${abandoned}, '\\x00', now() - interval '40 days', now() - interval '39 days'),
      (${withSession}, '\\x00', now() - interval '40 days', now() - interval '39 days'),
      (${connected}, '\\x00', now() - interval '40 days', now() - interval '1 day'),
      (${fresher}, '\\x00', now(), NULL)`;
    await sql`INSERT INTO sessions (id, status, model, tools, host_id, ended_at) VALUES
      (${randomUUID()}, 'ended', '{}', '[]', ${withSession}, now())`;

    const dry = await prune(sql, "brain", { olderThanSeconds: 30 * DAY, dryRun: true, wait: true });
    expect(dry).toMatchObject({ idempotencyKeys: 1, hostConnections: 1, replicas: 1, components: 1, hosts: 1 });
    expect(await sql`SELECT 1 FROM servers WHERE id = ${oldServer}`).toHaveLength(1);

    await prune(sql, "brain", { olderThanSeconds: 30 * DAY, wait: true });
    expect(await sql`SELECT id FROM servers WHERE id IN (${oldServer}, ${recentServer})`).toEqual([
      { id: recentServer },
    ]);
    expect(await sql`SELECT id FROM host_connections WHERE id IN (${oldConn}, ${recentConn})`).toEqual([
      { id: recentConn },
    ]);
    expect(await sql`SELECT id FROM host_replicas WHERE id IN (${oldReplica}, ${recentReplica})`).toEqual([
      { id: recentReplica },
    ]);
    expect(await sql`SELECT key_hash FROM idempotency_keys WHERE scope = 'test'`).toHaveLength(1);
    const hosts = await sql<{ id: string }[]>`
      SELECT id FROM hosts WHERE id IN (${abandoned}, ${withSession}, ${connected}, ${fresher})`;
    expect(hosts.map((h) => h.id).sort()).toEqual([withSession, connected, fresher].sort());
    const comps = await sql<
      { sha256: string }[]
    >`SELECT sha256 FROM components WHERE sha256 IN (${unused}, ${used}, ${fresh}) ORDER BY 1`;
    expect(comps.map((c) => c.sha256)).toEqual([used, fresh]);
    // The pg-boss queues keep finished jobs a day, not pg-boss's default week.
    const queues =
      await sql`SELECT name, deletion_seconds FROM brain_boss.queue WHERE name IN ('brain-deadlines', 'brain-calls')`;
    expect(queues.map((q) => q.deletion_seconds)).toEqual([DAY, DAY]);
  });

  it("one server prunes in the background once BRAIN_RETENTION_DAYS have passed", async () => {
    const id = await endedSession(3);
    // 2 days: the session ended 3 days ago goes; a second server started with it competes for the lock.
    const env = { BRAIN_RETENTION_DAYS: "2", BRAIN_LOG_LEVEL: "info" };
    const a = await spawnServer({ databaseUrl: brain.db.url, env });
    const b = await spawnServer({ databaseUrl: brain.db.url, env });
    try {
      await until("the background prune", async () => (await rowsOf([id])).sessions === 0, 20_000);
      expect(await rowsOf([id])).toEqual({ sessions: 0, records: 0, calls: 0 });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
