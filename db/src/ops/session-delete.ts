import type { TransactionSql } from "postgres";
import { tables } from "../tables.js";

/**
 * Deletes sessions and everything written under them, inside the caller's transaction. The hot
 * tables (records, calls, activation_budgets, tool_model_calls) have no foreign key to sessions
 * (migration 0014), so nothing cascades to them: they are deleted here, explicitly.
 *
 * The order is what keeps orphans out. The session rows are locked first, in a statement of their
 * own: every write that inserts into a hot table does so only in a statement that has first locked
 * the session row (an append's update of last_seq; `FOR KEY SHARE` before a budget is charged), and
 * that statement either committed before this lock was granted or waits and then finds the row
 * gone. The children are then deleted by a later statement, whose snapshot (READ COMMITTED) sees
 * every child committed before the lock. Tables written off the hot path still cascade from the
 * session row (and mcp_tasks from calls).
 *
 * A caller that has already locked the rows it chose (retention: `FOR UPDATE SKIP LOCKED`) pays
 * nothing more for the lock here. Returns the deleted sessions and their hosts.
 */
export async function deleteSessionsIn(
  tx: TransactionSql,
  ids: string[],
): Promise<{ id: string; host_id: string | null }[]> {
  const brain = tables(tx);
  if (ids.length === 0) return [];
  const locked = await tx<{ id: string }[]>`
    SELECT id FROM ${brain.sessions} WHERE id = ANY(${tx.array(ids)}::uuid[]) ORDER BY id FOR UPDATE`;
  if (locked.length === 0) return [];
  const held = tx.array(locked.map((r) => r.id));
  return tx<{ id: string; host_id: string | null }[]>`
    WITH c AS (DELETE FROM ${brain.calls} WHERE session_id = ANY(${held}::uuid[])),
    r AS (DELETE FROM ${brain.records} WHERE session_id = ANY(${held}::uuid[])),
    b AS (DELETE FROM ${brain.activation_budgets} WHERE session_id = ANY(${held}::uuid[])),
    t AS (DELETE FROM ${brain.tool_model_calls} WHERE session_id = ANY(${held}::uuid[]))
    DELETE FROM ${brain.sessions} WHERE id = ANY(${held}::uuid[]) RETURNING id, host_id`;
}

/**
 * Locks a session row for its deletion, before anything else of that deletion. Every hot write
 * takes a lock on this row before it adds a row under the session (an append's update; a
 * transition's or a tool model call's key-share lock, taken before it charges the budget), so a
 * write either finishes first (this waits for it) or waits here and then finds the session gone.
 * Taking it first also means the deletion never waits for this row while holding a lock such a
 * write needs. False when the session does not exist.
 */
export async function lockSession(tx: TransactionSql, id: string): Promise<boolean> {
  const brain = tables(tx);
  const rows = await tx`SELECT 1 FROM ${brain.sessions} WHERE id = ${id} FOR UPDATE`;
  return rows.length > 0;
}
