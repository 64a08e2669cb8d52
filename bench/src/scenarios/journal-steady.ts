import { connect, type Sql } from "@aexhq/brain-db/connect";
import { migrate } from "@aexhq/brain-db/migrate";
import { dropJournalWeek, newSessionId } from "@aexhq/brain-db/ops";
import { type Figure, value } from "../measure/stats.js";
import type { Scenario } from "../runner/context.js";

const SCHEMA = "brain";
const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** Retention's window, in weeks: a week's sessions go once the window has passed their end. */
const WINDOW_WEEKS = 2;
/** Records per session, and a call row for every fourth record (a tool call's start). */
const PER_SESSION = 500;
const PAYLOAD = JSON.stringify({ call: 2, outcome: { status: "ok", value: { text: "x".repeat(160) } } });

/**
 * Does the journal stop growing under a steady load with retention on? Weeks of journals go by on
 * a simulated clock: each week's sessions (UUIDv7 ids of that week, so their rows land in its
 * partitions) are written, ended the next day, and then retention runs as in the middle of that
 * week (`dropJournalWeek`, as `prune` runs it, with that moment's cutoff), dropping the week that
 * left the window. The journal's size (records and calls, every partition, indexes and TOAST
 * included) and the sessions table's are read after each week. The load is bulk INSERTs, a week's
 * worth in seconds, not the hot path; `VACUUM sessions` after each week stands in for the
 * autovacuum runs a real week would see (retention deletes the week's session rows).
 */
export const journalSteady: Scenario = {
  name: "journal_steady",
  async run(ctx) {
    const sql = connect(ctx.databaseUrl, { schema: SCHEMA, max: 2, applicationName: "bench-journal-steady" });
    try {
      await migrate(sql, SCHEMA);
      const weeks = ctx.quick ? 7 : 10;
      const perWeek = ctx.quick ? 200_000 : 1_000_000;
      // Every simulated week in the past, whole, with its partitions made in advance.
      const first = Math.floor(Date.now() / WEEK) * WEEK - (weeks + 1) * WEEK;
      await sql`SELECT brain.ensure_journal_partitions(0, ${weeks + 2})`;
      const journal: number[] = [];
      const sessions: number[] = [];
      const dropMs: number[] = [];
      const retried: number[] = [];
      for (let w = 0; w < weeks; w++) {
        const start = first + w * WEEK;
        await loadWeek(sql, start, perWeek);
        // Retention as in the middle of week w (no boundary to fall on): what ended before that
        // moment − the window goes, so weeks w − WINDOW_WEEKS … w stay.
        const t0 = performance.now();
        const week = await dropAsAt(sql, start + WEEK / 2 - WINDOW_WEEKS * WEEK);
        dropMs.push(performance.now() - t0);
        if (week.retries > 0) retried.push(week.retries);
        await sql`VACUUM brain.sessions`;
        const [size] = await sql<{ journal: string; sessions: string }[]>`
          SELECT (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('brain.records'))
               + (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('brain.calls')) AS journal,
                 pg_total_relation_size('brain.sessions') AS sessions`;
        journal.push(Number(size!.journal) / 2 ** 20);
        sessions.push(Number(size!.sessions) / 2 ** 20);
        ctx.log(
          `  journal_steady: week ${w + 1}: journal ${journal[w]!.toFixed(1)} MiB, sessions ${sessions[w]!.toFixed(2)} MiB`,
        );
      }
      if (retried.length > 0)
        ctx.log(`  journal_steady: a drop gave way to a lock and ran again (${retried.join(", ")} times)`);
      return { figures: figuresOf(journal, sessions, dropMs, perWeek) };
    } finally {
      await sql.end({ timeout: 2 });
    }
  },
};

/** The weeks once the window is full (retention drops one week as one comes in), and the last. */
function figuresOf(journal: number[], sessions: number[], dropMs: number[], perWeek: number): Figure[] {
  // After week w, weeks w − WINDOW_WEEKS … w are kept: full from week WINDOW_WEEKS (0-based) on.
  const full = WINDOW_WEEKS;
  const steady = journal.slice(full);
  const note = `${perWeek} records a week, ${WINDOW_WEEKS}-week window, sizes after week ${full + 1} of ${journal.length}`;
  return [
    value("journal_steady.journal_first", "MiB", 1, journal[full]!, {
      note: `journal once the window is full (${note})`,
    }),
    value("journal_steady.journal_max", "MiB", steady.length, Math.max(...steady), {
      note: "largest journal after it",
    }),
    value("journal_steady.journal_last", "MiB", 1, journal[journal.length - 1]!, {
      note: "journal after the last week",
    }),
    value("journal_steady.sessions_max", "MiB", steady.length, Math.max(...sessions.slice(full)), {
      note: "largest sessions table once the window is full",
    }),
    value("journal_steady.drop", "ms", dropMs.length - full, Math.max(...dropMs.slice(full)), {
      note: "longest weekly retention run (a week's partitions detached and dropped)",
    }),
  ];
}

/**
 * Retention's week drop as `prune` runs it (dropJournalWeek: a detach that waits more than a
 * second for its lock gives way), with the cutoff of a moment in the simulated past. A week loaded
 * seconds ago is often being vacuumed or analysed by autovacuum, which holds its partition: the
 * drop gives way and runs again, as the next prune would.
 */
async function dropAsAt(sql: Sql, cutoff: number): Promise<{ weeks: number; retries: number }> {
  for (let retries = 0; ; retries++) {
    // No wait beyond the lock's own second: autovacuum yields a partition to a waiting lock.
    const week = await dropJournalWeek(sql, (Date.now() - cutoff) / 1000);
    if (week.weeks > 0 || retries >= 10 || !(await weekDue(sql, cutoff))) return { weeks: week.weeks, retries };
  }
}

/** Whether a week of partitions is older than `cutoff` (and so would have been dropped but for a lock). */
async function weekDue(sql: Sql, cutoff: number): Promise<boolean> {
  const [row] = await sql<{ due: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'brain.records'::regclass AND c.relname ~ '^records_w[0-9]{8}$'
        AND to_date(substr(c.relname, 10), 'YYYYMMDD') + 7 < ${new Date(cutoff)}::date
    ) AS due`;
  return row?.due ?? false;
}

/** A week's sessions, ended the day after it starts, with their records and calls. */
async function loadWeek(sql: Sql, start: number, records: number): Promise<void> {
  const ids = Array.from({ length: Math.ceil(records / PER_SESSION) }, (_, i) => newSessionId(start + i));
  const ended = new Date(start + DAY);
  for (let i = 0; i < ids.length; i += 200) {
    const chunk = sql.array(ids.slice(i, i + 200));
    await sql`
      INSERT INTO brain.sessions (id, model, tools, last_seq, status, ended_at)
      SELECT u, '{"provider":"scripted"}', '[]', ${PER_SESSION}, 'ended', ${ended}
      FROM unnest(${chunk}::uuid[]) AS u`;
    await sql`
      INSERT INTO brain.records (session_id, seq, kind, payload)
      SELECT u, g, 'tool_result', ${PAYLOAD}::jsonb
      FROM unnest(${chunk}::uuid[]) AS u, generate_series(1, ${PER_SESSION}) AS g`;
    await sql`
      INSERT INTO brain.calls (session_id, seq, tool, activation_seq, state, outcome, ended_at)
      SELECT u, g, 'bench', 1, 'ended', '{"status":"ok"}', ${ended}
      FROM unnest(${chunk}::uuid[]) AS u, generate_series(1, ${PER_SESSION}, 4) AS g`;
  }
}
