import type { Sql } from "postgres";
import { tables } from "../tables.js";

/**
 * Of the sessions a server folded up to `seq`, those whose journal in the database now ends
 * before it: records this server saw committed are gone, which happens when the database failed
 * over to a standby that never received them (asynchronous replication). Their in-memory state
 * must be dropped and read again.
 */
export async function journalsBehind(sql: Sql, folded: readonly { id: string; seq: number }[]): Promise<string[]> {
  const brain = tables(sql);
  if (folded.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    SELECT s.id FROM ${brain.sessions} s
    JOIN unnest(${sql.array(folded.map((f) => f.id))}::uuid[], ${sql.array(folded.map((f) => f.seq))}::bigint[])
      AS f(id, seq) ON s.id = f.id
    WHERE s.last_seq < f.seq`;
  return rows.map((r) => r.id);
}
