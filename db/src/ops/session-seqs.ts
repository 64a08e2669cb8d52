import type { Sql } from "postgres";
import { tables } from "../tables.js";

export interface SessionEnd {
  /** Where the journal ends now (`sessions.last_seq`). */
  seq: number;
  /** The session ended. */
  ended: boolean;
}

/**
 * Where each of `ids`' journals ends now: what a server that cannot LISTEN compares, every poll,
 * with what it saw last. A deleted session is missing from the answer.
 */
export async function sessionSeqs(sql: Sql, ids: readonly string[]): Promise<Map<string, SessionEnd>> {
  const brain = tables(sql);
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; last_seq: number; ended: boolean }[]>`
    SELECT id, last_seq, status <> 'active' AS ended
    FROM ${brain.sessions} WHERE id = ANY(${sql.array([...ids])}::uuid[])`;
  return new Map(rows.map((r) => [r.id, { seq: Number(r.last_seq), ended: r.ended }]));
}
