import type { Sql } from "postgres";

/**
 * The stacks' call round trips on `turn_one_tool.call_roundtrip`'s own span, read from what each
 * stack journaled: a call's `tool_call_started` inserted → its `tool_call_ended` inserted, both
 * `created_at` from `clock_timestamp()` inside the statement that inserts the row. So the span is
 * Brain's to the microsecond: the rest of the intent's statement, its commit, the dispatch, the
 * handler, the result's batch up to its insert. (A stack server's own clock, from sending the
 * intent to reading the result frame, counts the intent's whole batch and none of the result's:
 * a different span, which is what this figure measured before 2026-12-05.)
 *
 * `since` is the database's clock before the measured calls; the last `n` calls after it are
 * taken (the ones the dispatch path measured, after its warm-up).
 */
export async function stackRoundtrips(sql: Sql, journal: "bare" | "brain", since: Date, n: number): Promise<number[]> {
  // Both journals keep a record as (session_id, seq, kind, payload, created_at), and a
  // tool_call_ended names its call in `payload.call`.
  const records = sql(journal === "brain" ? "brain.records" : "bench.stack_records");
  const rows = await sql<{ ms: number }[]>`
    SELECT (extract(epoch FROM e.created_at - s.created_at) * 1000)::float8 AS ms
    FROM ${records} s
    JOIN ${records} e ON e.session_id = s.session_id AND e.kind = 'tool_call_ended'
      AND (e.payload->>'call')::bigint = s.seq
    WHERE s.kind = 'tool_call_started' AND s.created_at >= ${since}
    ORDER BY s.created_at DESC LIMIT ${n}`;
  return rows.map((r) => r.ms).reverse();
}

/** The database's clock now: where a stack's measured calls start. */
export async function databaseNow(sql: Sql): Promise<Date> {
  const [row] = await sql<{ now: Date }[]>`SELECT clock_timestamp() AS now`;
  return row!.now;
}
