import type { ConsoleCall, ConsoleCallsQuery } from "@aexhq/brain-contracts";
import type { Sql } from "postgres";
import { tables } from "../tables.js";

interface Row {
  session_id: string;
  seq: number;
  tool: string;
  state: ConsoleCall["status"];
  executor: ConsoleCall["executor"];
  host_id: string | null;
  outcome: string | null;
  error_code: string | null;
  started_at: Date;
  ended_at: Date | null;
  deadline_at: Date | null;
  elapsed_ms: number;
}

/**
 * The console's tool calls of every session: those not ended, oldest first (what is stuck shows
 * at the top), or the most recent ones. The outcome is read only once the call has ended: while
 * it is open the column holds its last published result, which is not an outcome.
 */
export async function consoleCalls(sql: Sql, query: ConsoleCallsQuery): Promise<ConsoleCall[]> {
  const brain = tables(sql);
  const open = query.open === true;
  const rows = await sql<Row[]>`
    SELECT session_id, seq, tool, state, executor, host_id,
           CASE WHEN state = 'ended' THEN outcome->>'status' END AS outcome,
           CASE WHEN state = 'ended' THEN outcome->'error'->>'code' END AS error_code,
           started_at, ended_at, deadline_at,
           (extract(epoch FROM COALESCE(ended_at, clock_timestamp()) - started_at) * 1000)::float8 AS elapsed_ms
    FROM ${brain.calls}
    WHERE (${!open} OR state <> 'ended')
      AND (${query.tool ?? null}::text IS NULL OR tool = ${query.tool ?? null}::text)
      AND (${query.session ?? null}::uuid IS NULL OR session_id = ${query.session ?? null}::uuid)
    ORDER BY ${open ? sql`started_at, session_id, seq` : sql`started_at DESC, session_id DESC, seq DESC`}
    LIMIT ${query.limit}`;
  return rows.map((r) => ({
    sessionId: r.session_id,
    sequence: r.seq,
    tool: r.tool,
    status: r.state,
    executor: r.executor,
    hostId: r.host_id,
    outcome: r.outcome,
    errorCode: r.error_code,
    startedAt: r.started_at.toISOString(),
    endedAt: r.ended_at?.toISOString() ?? null,
    deadlineAt: r.deadline_at?.toISOString() ?? null,
    elapsedMs: Math.max(0, Math.round(r.elapsed_ms)),
  }));
}
