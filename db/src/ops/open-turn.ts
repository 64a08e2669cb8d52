import type { Sql } from "postgres";
import { tables } from "../tables.js";

/**
 * The user message whose turn is running or waiting to run: the first message after the one the
 * last activation_ended answered (turns run in order), unless the session has ended. Null when
 * every message is answered (or the session ended); "missing" when there is no such session.
 * Two short index scans: back from the journal's end to its last answer, forward from there.
 */
export async function openTurn(sql: Sql, sessionId: string): Promise<number | null | "missing"> {
  const brain = tables(sql);
  const [row] = await sql<{ status: "active" | "ended"; message: number | null }[]>`
    SELECT s.status, m.seq AS message
    FROM ${brain.sessions} s
    LEFT JOIN LATERAL (
      SELECT coalesce((payload->>'message')::bigint, 0) AS answered FROM ${brain.records}
      WHERE session_id = s.id AND kind = 'activation_ended' AND payload->>'message' IS NOT NULL
      ORDER BY seq DESC LIMIT 1
    ) a ON true
    LEFT JOIN LATERAL (
      SELECT seq FROM ${brain.records}
      WHERE session_id = s.id AND seq > coalesce(a.answered, 0) AND kind = 'user_message'
      ORDER BY seq LIMIT 1
    ) m ON true
    WHERE s.id = ${sessionId}`;
  if (!row) return "missing";
  return row.status === "ended" ? null : row.message === null ? null : Number(row.message);
}
