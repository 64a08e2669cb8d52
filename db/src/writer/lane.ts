import type { ReservedSql, Sql } from "postgres";
import { openLane, throughPooler } from "../connect.js";
import { bindDistributed } from "../tables.js";

/** The journal writer's own connection: a one-connection pool, marked dead the moment its socket closes. */
export interface Lane {
  pool: Sql;
  conn: Promise<ReservedSql>;
  /** The connection once open: a batch is sent behind another only on a connection already there. */
  ready?: ReservedSql;
  dead: boolean;
  /**
   * Calls `fn` once the connection is gone (closed, failed to open, or abandoned), at once if it
   * already is; returns its unsubscribe. Callbacks, not a promise that every batch races: a
   * promise pending for the lane's whole life would keep one reaction per batch (a leak of ~0.5 KB
   * a batch, seen as server heap growing with every commit).
   */
  onLost(fn: () => void): () => void;
  /** Marks the lane dead and tells whoever waits in `onLost`. */
  kill(): void;
  /** Its backend, to end it when the lane is abandoned (pid and start: pids are reused). */
  backend?: { pid: number; start: string };
}

/** A new lane beside `sql`, connecting at once. */
export function openWriterLane(sql: Sql, citus = false): Lane {
  const waiting = new Set<() => void>();
  const lane = {
    dead: false,
    onLost(fn: () => void) {
      if (lane.dead) {
        fn();
        return () => {};
      }
      waiting.add(fn);
      return () => waiting.delete(fn);
    },
    kill() {
      if (lane.dead) return;
      lane.dead = true;
      for (const fn of [...waiting]) fn();
      waiting.clear();
    },
  } as Lane;
  lane.pool = openLane(sql, "brain-writer", { onClose: () => lane.kill() });
  if (citus) bindDistributed(lane.pool);
  // Through a pooler each transaction may run on another backend: none is known, none is ended.
  const pooled = throughPooler(lane.pool);
  lane.conn = lane.pool.reserve().then(async (c) => {
    // As text: a Date would lose the microseconds and never match again.
    const [me] = pooled
      ? []
      : await c<{ pid: number; start: string }[]>`
          SELECT pid, backend_start::text AS start FROM pg_stat_activity WHERE pid = pg_backend_pid()`;
    lane.backend = me;
    lane.ready = c;
    return c;
  });
  lane.conn.catch(() => lane.kill());
  return lane;
}

/** What became of pipelined queries: undefined for a query that never settled. */
export interface Settled {
  results: (PromiseSettledResult<unknown> | undefined)[];
  /** The connection was lost before every query settled. */
  lost: boolean;
}

/**
 * Like Promise.allSettled, but stops waiting when the lane is lost. postgres.js never settles the
 * queries it had queued on a reserved connection without writing them yet (behind a statement it
 * first has to describe) when that connection dies: waiting for them would wedge the writer.
 */
export async function settle(lane: Lane, queries: Promise<unknown>[]): Promise<Settled> {
  const results: Settled["results"] = Array.from({ length: queries.length }, () => undefined);
  queries.forEach((q, i) => {
    q.then(
      (value) => {
        results[i] = { status: "fulfilled", value };
      },
      (reason: unknown) => {
        results[i] = { status: "rejected", reason };
      },
    );
  });
  let unsubscribe = () => {};
  const gone = new Promise<boolean>((resolve) => {
    unsubscribe = lane.onLost(() => resolve(true));
  });
  const lost = await Promise.race([Promise.allSettled(queries).then(() => false), gone]).finally(() => unsubscribe());
  // Lost and yet everything answered (the close came right after the last answer): not lost.
  return { results, lost: lost && results.some((r) => r === undefined) };
}

/** The first query that failed, in the order they were sent. */
export function firstFailure(s: Settled): PromiseRejectedResult | undefined {
  return s.results.find((r): r is PromiseRejectedResult => r?.status === "rejected");
}
