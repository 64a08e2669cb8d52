import type { TransactionSql } from "postgres";

/**
 * A write that can share one statement with others of its kind: the journal's appends and call
 * transitions, most of a busy batch. Merging N of them into one statement saves Postgres N − 1
 * statement starts (parse of the parameters, executor start-up, the CTE plumbing) and the driver
 * N − 1 round-trip objects, which is where a tool call's cost went once each write was one
 * statement.
 */
export interface Mergeable<R> {
  /** Writes merge only with writes of the same kind (its statement, and any shared parameter). */
  kind: string;
  /** The session the write appends to: a statement holds at most one write per session. */
  session: string;
  /** This write's part of the merged statement's input. */
  input: unknown;
  /**
   * Issues one statement for all `inputs` (same kind, distinct sessions) before its first await,
   * and resolves with one result per input, in order. `delegated`: one input, its statement sent
   * to the Citus worker holding its session (ops/on-session-shards.ts).
   */
  many(tx: TransactionSql, inputs: unknown[], delegated?: boolean): Promise<R[]>;
}

/** The part of a write the merge needs (WriteOp, without importing the writer). */
export interface MergeCandidate {
  run(tx: TransactionSql): Promise<unknown>;
  merge?: Mergeable<unknown> | undefined;
}

/**
 * Issues a batch's writes, merging where it keeps every ordering the writer promises: one result
 * promise per write, in the writes' order.
 *
 * Only consecutive mergeable writes merge (a write of another shape, which may read what an
 * earlier one wrote, keeps its place). Within such a run each session's writes keep their order:
 * a session's k-th write in the run goes into the k-th round of statements, and rounds are issued
 * in order, so its sequences come out exactly as if the writes ran one by one. Writes to different
 * sessions touch disjoint rows (a session's row, its records, calls and budgets), so their order
 * relative to each other is free. On a Citus cluster (`citus`) every write is a statement of its
 * own, delegated to the worker holding its session (Mergeable.many): a statement there runs
 * against the shards of one session.
 */
export function issueWrites(
  tx: TransactionSql,
  ops: readonly MergeCandidate[],
  onStatement: () => void = () => {},
  citus = false,
): Promise<unknown>[] {
  const out: Promise<unknown>[] = new Array(ops.length);
  let i = 0;
  while (i < ops.length) {
    const m = ops[i]!.merge;
    if (!m || citus) {
      out[i] = m ? m.many(tx, [m.input], true).then(([result]) => result) : ops[i]!.run(tx);
      onStatement();
      i++;
      continue;
    }
    let end = i;
    while (end < ops.length && ops[end]!.merge) end++;
    issueRun(tx, ops, i, end, out, onStatement);
    i = end;
  }
  return out;
}

function issueRun(
  tx: TransactionSql,
  ops: readonly MergeCandidate[],
  from: number,
  to: number,
  out: Promise<unknown>[],
  onStatement: () => void,
): void {
  const seen = new Map<string, number>();
  // rounds[k]: kind -> indexes of the writes that are their session's k-th in this run
  const rounds: Map<string, number[]>[] = [];
  for (let k = from; k < to; k++) {
    const m = ops[k]!.merge!;
    const round = seen.get(m.session) ?? 0;
    seen.set(m.session, round + 1);
    if (rounds[round] === undefined) rounds[round] = new Map();
    const kinds = rounds[round]!;
    const group = kinds.get(m.kind);
    if (group) group.push(k);
    else kinds.set(m.kind, [k]);
  }
  for (const kinds of rounds) {
    for (const group of kinds.values()) {
      onStatement();
      if (group.length === 1) {
        out[group[0]!] = ops[group[0]!]!.run(tx);
        continue;
      }
      const first = ops[group[0]!]!.merge!;
      const all = first.many(
        tx,
        group.map((k) => ops[k]!.merge!.input),
      );
      for (const [j, k] of group.entries()) out[k] = all.then((results) => results[j]);
    }
  }
}
