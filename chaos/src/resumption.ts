import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";

/**
 * Milliseconds from `since` to the first turn that ended after it (an `activation_ended` the new
 * primary committed), or null when none did within `withinMs`: after a fail-over, how long until
 * work resumed.
 */
export async function firstTurnAfter(url: string, since: Date, withinMs: number): Promise<number | null> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    for (const deadline = Date.now() + withinMs; Date.now() < deadline; await sleep(100)) {
      const rows = await sql<{ at: Date | null }[]>`
        SELECT min(created_at) AS at FROM brain.records
        WHERE kind = 'activation_ended' AND created_at > ${since}`.catch(() => []);
      const at = rows[0]?.at;
      if (at) return Math.max(0, at.getTime() - since.getTime());
    }
    return null;
  } finally {
    await sql.end({ timeout: 1 });
  }
}
