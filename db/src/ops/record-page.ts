import type { Sql } from "postgres";
import { tables } from "../tables.js";
import type { RecordRow } from "./records.js";

export interface RecordPage {
  rows: RecordRow[];
  /** Whether records after the page may exist (it was cut by the row or the byte limit). */
  more: boolean;
}

/**
 * Records after a sequence, in order, at most `rows` of them and no more than `bytes` of payload
 * JSON (but always at least one record, whatever its size): what one event-stream reader holds
 * in memory at a time, independent of the journal's size. The byte limit is applied in the
 * database, so a page of large records never reaches the server whole.
 */
export async function readRecordPage(
  sql: Sql,
  sessionId: string,
  after: number,
  limits: { rows: number; bytes: number },
): Promise<RecordPage> {
  const brain = tables(sql);
  const found = await sql<(RecordRow & { fetched: number })[]>`
    SELECT seq, kind, payload, created_at, fetched FROM (
      SELECT r.*, sum(r.size) OVER w AS upto, row_number() OVER w AS n, count(*) OVER () AS fetched
      FROM (
        SELECT seq, kind, payload, created_at, octet_length(payload::text) AS size FROM ${brain.records}
        WHERE session_id = ${sessionId} AND seq > ${after}
        ORDER BY seq LIMIT ${limits.rows}
      ) r
      WINDOW w AS (ORDER BY r.seq)
    ) page
    WHERE upto <= ${limits.bytes} OR n = 1
    ORDER BY seq`;
  const fetched = Number(found[0]?.fetched ?? 0);
  const rows = found.map(({ fetched: _, ...row }) => row);
  return { rows, more: rows.length < fetched || fetched === limits.rows };
}
