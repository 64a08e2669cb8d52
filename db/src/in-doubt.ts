import type { Sql } from "postgres";
import { isConnectionError } from "./availability.js";

export type Fate = "committed" | "aborted" | "unknown";

const LOCK_NOT_AVAILABLE = "55P03";

/**
 * What became of a batch whose COMMIT was sent on a connection that died before the answer came.
 * Every batch sets its writer's mark to its own id; reading the mark once the database answers
 * tells. The read takes the row's lock first: while the old backend has not finished (it may still
 * be committing, or not yet have noticed that its client is gone) the lock is held and the read
 * waits, so a transaction that is about to commit is never taken for one that did not.
 */
export async function resolveInDoubt(sql: Sql, writerId: string, batch: string, withinMs: number): Promise<Fate> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      const mark = await sql.begin(async (tx) => {
        await tx`SET LOCAL lock_timeout = '1s'`;
        const [row] = await tx<{ batch: string }[]>`
          SELECT batch::text FROM writer_marks WHERE writer_id = ${writerId} FOR SHARE`;
        return row?.batch ?? null;
      });
      return mark === batch ? "committed" : "aborted";
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== LOCK_NOT_AVAILABLE && !isConnectionError(error)) throw error;
    }
    if (Date.now() >= until) return "unknown";
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
