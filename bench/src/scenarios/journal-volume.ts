import { connect } from "@aexhq/brain-db/connect";
import { newSessionId, prune } from "@aexhq/brain-db/ops";
import type { Sql } from "postgres";
import { type Figure, latency, value } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import { plainSql } from "../runner/database.js";
import type { AlternateArgs, AlternateResult, PrepareArgs } from "./host-protocol.js";

const DAY = 86_400_000;
/** Records per loaded session: a long journal each, as a busy deployment's are. */
const PER_SESSION = 1_000;
/** A record's payload, about the size of a small tool result. */
const PAYLOAD = JSON.stringify({ call: 2, outcome: { status: "ok", value: { text: "x".repeat(160) } } });

/**
 * A year of journals, scaled to the machine: does the journal's size slow the hot path, and what
 * does retention cost the writes going on beside it? Sequential text turns on an empty database,
 * then after `--quick` 1 million / 10 million records of ended sessions were loaded into a week of
 * sessions two weeks back (real rows in its partitions, written by bulk INSERT, then vacuumed and
 * checkpointed); then retention
 * (`prune`, one day's window) drops that week while a session of this week appends a record at a
 * time, and the longest of those appends is the stall the drop caused; then text turns again, on a
 * database empty again, the other side of the bracket around the loaded ones.
 */
export const journalVolume: Scenario = {
  name: "journal_volume",
  run: (ctx) =>
    withBrain(ctx, "journal_volume", {}, async (brain) => {
      const turns = ctx.quick ? 100 : 300;
      const total = ctx.quick ? 1_000_000 : 10_000_000;
      await brain.host.call("prepare", { kind: "text", turns: 0, warmup: ctx.quick ? 30 : 100 } satisfies PrepareArgs);
      const prepare: PrepareArgs = { kind: "text", turns, warmup: 1 };
      const id = (await brain.host.call<{ sessionId: string }>("prepare", prepare)).sessionId;
      const alternate = { sessionIds: [id], turns } satisfies AlternateArgs;
      const empty = await brain.host.call<AlternateResult>("alternate", alternate);
      const loadStarted = performance.now();
      await load(ctx.sql, total);
      const loadMs = performance.now() - loadStarted;
      ctx.log(`  journal_volume: ${total} records loaded in ${Math.round(loadMs)} ms`);
      await brain.host.call("prepare", { kind: "text", turns: 0, warmup: 10 } satisfies PrepareArgs);
      const loaded = await brain.host.call<AlternateResult>("alternate", alternate);
      const stall = await dropBeside(ctx.sql, ctx.databaseUrl, id);
      // Empty again: with the turns before the load, this brackets the loaded ones, so a machine
      // that slowed or sped up meanwhile does not pass for the journal's size.
      const after = await brain.host.call<AlternateResult>("alternate", alternate);
      const figures: Figure[] = [
        latency("journal_volume.turn_empty", empty.turnMs[id] ?? [], { note: "text turns, nothing else stored" }),
        latency("journal_volume.turn_loaded", loaded.turnMs[id] ?? [], {
          note: `text turns beside ${total} records of ended sessions in an older week`,
          cpu: brain.cpu.last,
        }),
        latency("journal_volume.turn_after", after.turnMs[id] ?? [], {
          note: "text turns once retention has dropped those records",
        }),
        latency("journal_volume.appends_during_drop", stall.appends, {
          note: `one-record appends of a live session while retention dropped ${stall.records} records (${stall.sessions} sessions)`,
        }),
        value("journal_volume.drop", "ms", 1, stall.dropMs, {
          note: "prune: the week's partitions detached and dropped",
        }),
      ];
      return figures;
    }),
};

/** `total` records in sessions of a week two weeks back, ended ten days ago. */
async function load(sql: Sql, total: number): Promise<void> {
  await sql`SELECT brain.ensure_journal_partitions(8, 3)`;
  const sessions = Math.ceil(total / PER_SESSION);
  const at = Date.now() - 14 * DAY;
  const ids = Array.from({ length: sessions }, (_, i) => newSessionId(at + i));
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    await sql`
      INSERT INTO brain.sessions (id, model, tools, last_seq, status, ended_at)
      SELECT u, '{"provider":"scripted"}', '[]', ${PER_SESSION}, 'ended', now() - interval '10 days'
      FROM unnest(${sql.array(chunk)}::uuid[]) AS u`;
    await sql`
      INSERT INTO brain.records (session_id, seq, kind, payload)
      SELECT u, g, 'tool_result', ${PAYLOAD}::jsonb
      FROM unnest(${sql.array(chunk)}::uuid[]) AS u, generate_series(1, ${PER_SESSION}) AS g`;
  }
  // Settled as a table written over weeks would be: vacuumed (hint bits set, so no turn pays for
  // a first read of them), and checkpointed (the load's dirty pages written out, not competing
  // with the measured commits' fsyncs).
  await sql`VACUUM (ANALYZE) brain.records, brain.sessions`;
  await sql`CHECKPOINT`;
}

/** Runs retention while a live session appends one record at a time; each append's latency, in ms. */
async function dropBeside(
  sql: Sql,
  url: string,
  sessionId: string,
): Promise<{ appends: number[]; dropMs: number; records: number; sessions: number }> {
  const [row] = await sql<{ last: number }[]>`SELECT last_seq::int AS last FROM brain.sessions WHERE id = ${sessionId}`;
  // Its own connection: the appends must not queue behind retention's statements in a pool.
  const own = plainSql(url, 1);
  // Retention as a server runs it: on a pool made by Brain's connect().
  const brainSql = connect(url, { schema: "brain", max: 4, applicationName: "bench-retention" });
  let seq = (row?.last ?? 0) + 1_000_000;
  const appends: number[] = [];
  let dropping = true;
  const appender = (async () => {
    while (dropping) {
      const t0 = performance.now();
      await own`INSERT INTO brain.records (session_id, seq, kind, payload) VALUES (${sessionId}, ${seq++}, 'bench_probe', '{}')`;
      appends.push(performance.now() - t0);
    }
  })();
  const t0 = performance.now();
  let counts: Awaited<ReturnType<typeof prune>>;
  try {
    counts = await prune(brainSql, "brain", { olderThanSeconds: 86_400, wait: true });
  } finally {
    dropping = false;
    await appender;
    await own.end();
    await brainSql.end();
  }
  const dropMs = performance.now() - t0;
  await sql`DELETE FROM brain.records WHERE session_id = ${sessionId} AND kind = 'bench_probe'`;
  return { appends, dropMs, records: counts?.records ?? 0, sessions: counts?.sessions ?? 0 };
}
