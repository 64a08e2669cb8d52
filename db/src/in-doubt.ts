import type { Sql } from "postgres";
import { isConnectionError } from "./availability.js";

export type Fate = "committed" | "aborted" | "unknown";

/**
 * What became of a transaction whose COMMIT was sent on a connection that died before the answer
 * came: Postgres keeps each transaction's status (txid_status), so any connection can ask once
 * the database answers again. "in progress" means the old backend has not noticed yet: ask again.
 */
export async function resolveInDoubt(sql: Sql, txid: string, withinMs: number): Promise<Fate> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      const [row] = await sql<{ status: string | null }[]>`SELECT txid_status(${txid}::bigint) AS status`;
      if (row?.status === "committed") return "committed";
      if (row?.status === "aborted") return "aborted";
    } catch (error) {
      if (!isConnectionError(error)) throw error;
    }
    if (Date.now() >= until) return "unknown";
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
