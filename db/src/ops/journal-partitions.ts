import type { Sql } from "postgres";
import { tables } from "../tables.js";

/** Postgres's lock_timeout expired. */
const LOCK_NOT_AVAILABLE = "55P03";

/** Weeks of partitions kept ahead of the current one (migration 0023). */
export const PARTITION_WEEKS_AHEAD = 8;

/**
 * Makes the journal's and the call table's partitions of the weeks of sessions to come, `ahead`
 * weeks past this one (and `back` before it): a session's rows land in its week's partition, not
 * in the default one. Idempotent; runs with the schema owner's rights (a SECURITY DEFINER
 * function), so a runtime role with DML alone may run it. Returns the partitions made.
 */
export async function ensureJournalPartitions(sql: Sql, ahead = PARTITION_WEEKS_AHEAD, back = 0): Promise<number> {
  const brain = tables(sql);
  const [row] = await sql<{ made: number }[]>`SELECT ${brain.ensure_journal_partitions}(${ahead}, ${back}) AS made`;
  return row?.made ?? 0;
}

export interface DroppedWeek {
  weeks: number;
  sessions: number;
  records: number;
}

/**
 * Drops at most one week of sessions whose every session ended more than `olderThanSeconds` ago
 * (and the week with them): its records and calls partitions go whole, then its sessions' rows.
 * One week per transaction: writes wait only for the detach, not for deleting rows, and at most a
 * second for it to get its lock (else nothing is dropped this time).
 */
export async function dropJournalWeek(sql: Sql, olderThanSeconds: number): Promise<DroppedWeek> {
  const brain = tables(sql);
  let rows: { dropped_weeks: number; dropped_sessions: string; dropped_records: string }[];
  try {
    rows = await sql`
      SELECT * FROM ${brain.drop_journal_partitions}(now() - make_interval(secs => ${olderThanSeconds}), 1)`;
  } catch (error) {
    // The detach waited a second for its lock (a long query on the journal): nothing was dropped,
    // and the next run tries again; the rows are deleted one by one meanwhile.
    if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return { weeks: 0, sessions: 0, records: 0 };
    throw error;
  }
  const [row] = rows;
  return {
    weeks: row?.dropped_weeks ?? 0,
    sessions: Number(row?.dropped_sessions ?? 0),
    records: Number(row?.dropped_records ?? 0),
  };
}

/**
 * Drops at most `weeks` past weeks whose sessions are all gone and whose partitions are empty
 * (migration 0026): what retention on a Citus cluster, which deletes sessions one by one, leaves.
 * Gives up for this time when a detach waits a second for its lock. Returns the weeks dropped.
 */
export async function dropEmptyJournalWeeks(sql: Sql, olderThanSeconds: number, weeks = 1): Promise<number> {
  const brain = tables(sql);
  try {
    const [row] = await sql<{ dropped: number }[]>`
      SELECT ${brain.drop_empty_journal_weeks}(now() - make_interval(secs => ${olderThanSeconds}), ${weeks}) AS dropped`;
    return row?.dropped ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return 0;
    throw error;
  }
}
