import type { ReservedSql, Sql } from "postgres";
import { openLane } from "./connect.js";

/** The journal writer's own connection: a one-connection pool, marked dead the moment its socket closes. */
export interface Lane {
  pool: Sql;
  conn: Promise<ReservedSql>;
  dead: boolean;
  /** Resolves once the connection is gone (closed, failed to open, or abandoned). */
  readonly lost: Promise<void>;
  /** Marks the lane dead and resolves `lost`. */
  kill(): void;
  /** Its backend, to end it when the lane is abandoned (pid and start: pids are reused). */
  backend?: { pid: number; start: string };
}

/** A new lane beside `sql`, connecting at once. */
export function openWriterLane(sql: Sql): Lane {
  let resolveLost!: () => void;
  const lost = new Promise<void>((resolve) => {
    resolveLost = resolve;
  });
  const lane = {
    dead: false,
    lost,
    kill() {
      lane.dead = true;
      resolveLost();
    },
  } as Lane;
  lane.pool = openLane(sql, "brain-writer", { onClose: () => lane.kill() });
  lane.conn = lane.pool.reserve().then(async (c) => {
    // As text: a Date would lose the microseconds and never match again.
    const [me] = await c<{ pid: number; start: string }[]>`
      SELECT pid, backend_start::text AS start FROM pg_stat_activity WHERE pid = pg_backend_pid()`;
    lane.backend = me;
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
  const lost = await Promise.race([Promise.allSettled(queries).then(() => false), lane.lost.then(() => true)]);
  // Lost and yet everything answered (the close came right after the last answer): not lost.
  return { results, lost: lost && results.some((r) => r === undefined) };
}

/** The first query that failed, in the order they were sent. */
export function firstFailure(s: Settled): PromiseRejectedResult | undefined {
  return s.results.find((r): r is PromiseRejectedResult => r?.status === "rejected");
}
