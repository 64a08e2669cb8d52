import type { Sql } from "postgres";
import { isConnectionError } from "../availability.js";
import { tables } from "../tables.js";

export type Fate = "committed" | "aborted" | "unknown";

const LOCK_NOT_AVAILABLE = "55P03";
/** Ends the reader's transaction: what it inserted to wait on a batch's mark is not kept. */
const ROLLED_BACK = new Error("in-doubt read rolled back");

/**
 * What became of a batch whose COMMIT was sent on a connection that died before the answer came.
 * Every batch sets its writer's mark to its own id; reading the mark once the database answers
 * tells. The read takes the row's lock first: while the old backend has not finished (it may still
 * be committing, or not yet have noticed that its client is gone) the lock is held and the read
 * waits, so a transaction that is about to commit is never taken for one that did not. A mark
 * that retention deleted is inserted again by the batch itself (see JournalWriter), a row no other
 * transaction can see or lock until it commits: so the reader first tries to insert that row
 * itself, which waits for the batch's own insert to commit or abort, and then rolls back.
 */
export async function resolveInDoubt(sql: Sql, writerId: string, batch: string, withinMs: number): Promise<Fate> {
  const mark = await readMark(sql, writerId, withinMs);
  if (mark === undefined) return "unknown";
  return mark === batch ? "committed" : "aborted";
}

/**
 * The batch id in a writer's mark once no transaction holds it (see resolveInDoubt): null when
 * there is no mark, undefined when the database did not answer within `withinMs`. Batches sent one
 * behind another each move the mark on from the one before, so the mark names the last of them
 * that committed.
 */
export async function readMark(sql: Sql, writerId: string, withinMs: number): Promise<string | null | undefined> {
  const brain = tables(sql);
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      let mark: string | null = null;
      await sql
        .begin(async (tx) => {
          await tx`SET LOCAL lock_timeout = '1s'`;
          // The writer's own id as a batch id no batch ever has: found below, it means no batch's mark.
          await tx`INSERT INTO ${brain.writer_marks} (writer_id, batch) VALUES (${writerId}, ${writerId}) ON CONFLICT DO NOTHING`;
          const [row] = await tx<{ batch: string }[]>`
            SELECT batch::text FROM ${brain.writer_marks} WHERE writer_id = ${writerId} FOR SHARE`;
          mark = row?.batch ?? null;
          throw ROLLED_BACK;
        })
        .catch((error: unknown) => {
          if (error !== ROLLED_BACK) throw error;
        });
      return mark === writerId ? null : mark;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== LOCK_NOT_AVAILABLE && !isConnectionError(error)) throw error;
    }
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
