import type { Sql } from "postgres";
import { tables } from "../tables.js";
import type { Rule } from "./retention-rules.js";

/**
 * Retention of a shared table on a Citus cluster, where it is a reference table and the session
 * tables that hold its rows are distributed: Citus will not correlate the two. So a page of due
 * rows is read in key order, their holders are asked for those keys at once, and the rows no
 * holder names are deleted by one statement that checks them due again and skips a row locked
 * elsewhere (Citus refuses to write a reference table in a transaction that read shards in
 * parallel, so the reads are not in it). The next page starts after the last key seen: rows
 * still held never keep retention from the ones after them. `dryRun` counts instead. Returns the
 * rows deleted (or that would be).
 */
export async function pruneShared(
  sql: Sql,
  rule: Rule,
  secs: number,
  limit: number,
  options: { dryRun?: boolean; signal?: AbortSignal } = {},
): Promise<number> {
  const brain = tables(sql);
  const key = sql.unsafe(rule.key);
  const type = sql.unsafe(rule.keyType ?? "text");
  const table = sql`${brain[rule.from]} ${sql(rule.as)}`;
  let after: string | null = null;
  let total = 0;
  for (;;) {
    if (options.signal?.aborted) return total;
    const from = after === null ? sql`` : sql`AND ${key} > ${after}::${type}`;
    const due = await sql<{ k: string }[]>`
      SELECT ${key}::text AS k FROM ${table} WHERE ${rule.due(sql, secs, brain)} ${from} ORDER BY ${key} LIMIT ${limit}`;
    const keys: string[] = due.map((r) => r.k);
    const held = await heldKeys(sql, rule, keys);
    const free = keys.filter((k) => !held.has(k));
    if (options.dryRun) total += free.length;
    else if (free.length > 0) {
      const deleted = await sql`
        DELETE FROM ${table} WHERE ${key} IN (
          SELECT ${key} FROM ${table} WHERE ${key} = ANY(${free}::${type}[]) AND ${rule.due(sql, secs, brain)}
          FOR UPDATE SKIP LOCKED)
        RETURNING 1`;
      total += deleted.length;
    }
    if (keys.length < limit) return total;
    after = keys.at(-1)!;
  }
}

/** Which of `keys` a holder row names: a grouped read per holder (per key for a text search). */
async function heldKeys(sql: Sql, rule: Rule, keys: string[]): Promise<Set<string>> {
  const brain = tables(sql);
  const held = new Set<string>();
  if (keys.length === 0) return held;
  const type = sql.unsafe(rule.keyType ?? "text");
  for (const h of rule.holders) {
    const column = sql(h.column);
    const where = h.where ? sql`AND ${sql.unsafe(h.where)}` : sql``;
    if (h.contains) {
      for (const k of keys) {
        const [row] = await sql`
          SELECT 1 FROM ${brain[h.from]} x WHERE strpos(x.${column}::text, ${k}) > 0 ${where} LIMIT 1`;
        if (row) held.add(k);
      }
      continue;
    }
    const rows = await sql<{ k: string }[]>`
      SELECT DISTINCT x.${column}::text AS k FROM ${brain[h.from]} x WHERE x.${column} = ANY(${keys}::${type}[]) ${where}`;
    for (const r of rows) held.add(r.k);
  }
  return held;
}
