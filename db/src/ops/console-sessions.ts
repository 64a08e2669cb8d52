import type { ConsoleSession, ConsoleSessionsQuery } from "@aexhq/brain-contracts";
import type { Sql } from "postgres";
import { tables } from "../tables.js";

interface Row {
  id: string;
  status: "active" | "ended";
  host_id: string | null;
  tools: { name: string }[];
  last_seq: number;
  metadata: Record<string, string>;
  application: string | null;
  open_calls: number;
  created_at: Date;
  last_record_at: Date | null;
  ended_at: Date | null;
}

/**
 * The console's list of sessions, newest first, every application's: by status, by a tool they
 * have (their placements, as advertised at creation), by creation time. Each row carries what a
 * list shows without opening the session: its open calls and the time of its last record, both
 * read by primary key.
 */
export async function consoleSessions(sql: Sql, query: ConsoleSessionsQuery): Promise<ConsoleSession[]> {
  const brain = tables(sql);
  const tool = query.tool === undefined ? null : JSON.stringify([{ name: query.tool }]);
  const rows = await sql<Row[]>`
    SELECT s.id, s.status, s.host_id, s.tools, s.last_seq, s.metadata, t.name AS application,
           (SELECT count(*)::int FROM ${brain.calls} c WHERE c.session_id = s.id AND c.state <> 'ended') AS open_calls,
           s.created_at,
           (SELECT r.created_at FROM ${brain.records} r WHERE r.session_id = s.id AND r.seq = s.last_seq) AS last_record_at,
           s.ended_at
    FROM ${brain.sessions} s LEFT JOIN ${brain.app_tokens} t ON t.id = s.token_id
    WHERE (${query.status ?? null}::text IS NULL OR s.status = ${query.status ?? null}::text)
      AND (${tool}::text IS NULL OR s.tools @> ${tool}::text::jsonb)
      AND (${query.since ?? null}::text IS NULL OR s.created_at >= ${query.since ?? null}::text::timestamptz)
      AND (${query.until ?? null}::text IS NULL OR s.created_at < ${query.until ?? null}::text::timestamptz)
    ORDER BY s.created_at DESC, s.id DESC
    LIMIT ${query.limit}`;
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    hostId: r.host_id,
    tools: r.tools.map((p) => p.name),
    lastSequence: r.last_seq,
    metadata: r.metadata,
    application: r.application,
    openCalls: r.open_calls,
    createdAt: r.created_at.toISOString(),
    lastRecordAt: r.last_record_at?.toISOString() ?? null,
    endedAt: r.ended_at?.toISOString() ?? null,
  }));
}
