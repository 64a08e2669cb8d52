import { randomUUID } from "node:crypto";
import { type Figure, latency, rate } from "../measure/stats.js";
import type { Scenario } from "../runner/context.js";
import { plainSql } from "../runner/database.js";
import { CpuMeter } from "../runner/proc.js";

const CHANNEL = "bench_floor";

/**
 * The physical floor of a durable step: one INSERT + NOTIFY committed by one autocommit statement
 * on one connection, sequentially, into a table shaped like the journal's records. A listener on
 * another connection (same process, so one clock) times NOTIFY delivery. Then the throughput cap
 * of notifying commits from 8 connections at once, against plain (non-notifying) commits: Postgres
 * serialises notifying commits cluster-wide, which is why the journal writer batches.
 */
export const floorCommit: Scenario = {
  name: "floor_commit",
  baseline: true,
  async run(ctx) {
    await ctx.sql`CREATE SCHEMA IF NOT EXISTS bench`;
    await ctx.sql`
      CREATE TABLE IF NOT EXISTS bench.floor (
        session_id uuid NOT NULL, seq bigint NOT NULL, kind text NOT NULL, payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (session_id, seq))`;
    const one = plainSql(ctx.databaseUrl, 1);
    const listener = plainSql(ctx.databaseUrl, 1);
    const figures: Figure[] = [];
    try {
      const session = randomUUID();
      let seq = 0;
      let waiting: { seq: string; resolve(at: number): void } | null = null;
      const early = new Map<string, number>();
      await listener.listen(CHANNEL, (payload) => {
        const at = performance.now();
        const w = waiting;
        if (w !== null && w.seq === payload) {
          waiting = null;
          w.resolve(at);
        } else early.set(payload, at);
      });
      const commit = () => {
        seq++;
        return one`
          WITH r AS (INSERT INTO bench.floor (session_id, seq, kind, payload)
                     VALUES (${session}, ${seq}, 'tool_result', ${'{"call":1,"outcome":{"status":"ok"}}'}::jsonb)
                     RETURNING seq)
          SELECT pg_notify(${CHANNEL}, (SELECT seq::text FROM r))`.execute();
      };
      const delivered = (s: string) =>
        new Promise<number>((resolve) => {
          const at = early.get(s);
          if (at !== undefined) {
            early.delete(s);
            resolve(at);
          } else waiting = { seq: s, resolve };
        });

      const n = ctx.quick ? 1_000 : 5_000;
      for (let i = 0; i < 200; i++) {
        await commit();
        await delivered(String(seq));
      }
      const commitMs: number[] = [];
      const afterAckMs: number[] = [];
      const toListenerMs: number[] = [];
      const cpu = new CpuMeter(() => ({ bench: process.pid }), ctx.database);
      cpu.start();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        const a = performance.now();
        await commit();
        const b = performance.now();
        const c = await delivered(String(seq));
        commitMs.push(b - a);
        afterAckMs.push(c - b);
        toListenerMs.push(c - a);
      }
      const seconds = (performance.now() - t0) / 1000;
      cpu.stop();
      // The journal writer's transaction shape: BEGIN, the statement, pg_notify, COMMIT, each
      // awaited in turn (postgres.js sql.begin): what one group commit costs at the least.
      const writerShape: number[] = [];
      for (let i = 0; i < n / 2; i++) {
        seq++;
        const s = seq;
        const a = performance.now();
        await one.begin(async (tx) => {
          await tx`INSERT INTO bench.floor (session_id, seq, kind, payload)
                   VALUES (${session}, ${s}, 'tool_result', ${'{"call":1,"outcome":{"status":"ok"}}'}::jsonb)`;
          await tx`SELECT pg_notify(${CHANNEL}, ${String(s)})`;
        });
        writerShape.push(performance.now() - a);
        await delivered(String(s));
      }
      figures.push(
        latency("floor_commit", commitMs, {
          note: "INSERT + pg_notify in one autocommit statement, one connection, sequential",
          cpu: cpu.last,
        }),
        rate("floor_commit.sequential", "commits/s", n, seconds, {
          note: "one connection, incl. waiting for delivery",
        }),
        latency("floor_commit.writer_shape", writerShape, {
          note: "BEGIN; INSERT; SELECT pg_notify; COMMIT, awaited in turn: the journal writer's transaction shape",
        }),
        latency("floor_notify.delivery", afterAckMs, {
          note: "listener (other connection, same process) receives − committer's ack; ≤ 0 when it lands first",
        }),
        latency("floor_notify.commit_to_listener", toListenerMs, { note: "statement sent → listener receives" }),
      );
    } finally {
      await listener.end();
      await one.end();
    }
    figures.push(
      await concurrentCommits(ctx.databaseUrl, ctx.database, ctx.quick ? 1_500 : 3_000, true),
      await concurrentCommits(ctx.databaseUrl, ctx.database, ctx.quick ? 1_500 : 3_000, false),
    );
    return { figures };
  },
};

/** Commits per second from 8 connections (64 concurrent statements), with or without NOTIFY. */
async function concurrentCommits(url: string, database: string, ms: number, notify: boolean): Promise<Figure> {
  const pool = plainSql(url, 8);
  try {
    const sessions = Array.from({ length: 64 }, () => randomUUID());
    const seqs = new Array<number>(64).fill(1_000_000);
    const statement = (lane: number) => {
      const s = sessions[lane]!;
      const q = ++seqs[lane]!;
      return notify
        ? pool`WITH r AS (INSERT INTO bench.floor (session_id, seq, kind, payload) VALUES (${s}, ${q}, 'x', '{}')
                          RETURNING seq)
               SELECT pg_notify(${CHANNEL}, (SELECT seq::text FROM r))`.execute()
        : pool`INSERT INTO bench.floor (session_id, seq, kind, payload) VALUES (${s}, ${q}, 'x', '{}')`.execute();
    };
    const run = async (until: number) => {
      let count = 0;
      await Promise.all(
        sessions.map(async (_, lane) => {
          while (performance.now() < until) {
            await statement(lane);
            count++;
          }
        }),
      );
      return count;
    };
    await run(performance.now() + 300);
    const cpu = new CpuMeter(() => ({ bench: process.pid }), database);
    cpu.start();
    const t0 = performance.now();
    const count = await run(t0 + ms);
    const seconds = (performance.now() - t0) / 1000;
    cpu.stop();
    return rate(notify ? "floor_commit.notify_c8" : "floor_commit.plain_c8", "commits/s", count, seconds, {
      note: notify
        ? "INSERT + NOTIFY autocommits, 8 connections, 64 in flight: the cap on notifying commits"
        : "plain INSERT autocommits, 8 connections, 64 in flight (Postgres group-commits the WAL flushes)",
      cpu: cpu.last,
    });
  } finally {
    await pool.end();
  }
}
