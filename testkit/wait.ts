// Waiting without sleeping: deferred promises, a bounded wait on a promise, and a bounded poll of
// a condition. Tests use these instead of sleeps, so a slow machine is slower, never flaky.
import type { Sql } from "@aexhq/brain-db/connect";

/** A promise with its resolve/reject exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Rejects with a message naming `what` if `promise` does not settle within `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `probe` until it returns something other than undefined/null/false, and returns that. A
 * bounded wait for a condition (a committed row, say), not a sleep: it fails with `what` at the
 * deadline.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Resolves once the Brain server `serverId` has completed `n` heartbeat/recovery ticks (one a
 * second) that started after this call: "a while later", measured by the server's own work.
 */
export async function serverTicks(sql: Sql, serverId: string, n = 2): Promise<void> {
  const [row] = await sql<{ now: string }[]>`SELECT now()::text AS now`;
  let after = row?.now ?? "";
  for (let i = 0; i < n; i++) {
    const seen = after;
    after = await until(`server tick ${i + 1} after ${seen}`, async () => {
      // Compared as text: a timestamptz parameter would be truncated to milliseconds.
      const [tick] = await sql<{ at: string }[]>`
        SELECT heartbeat_at::text AS at FROM servers
        WHERE id = ${serverId} AND heartbeat_at > ${seen}::text::timestamptz`;
      return tick?.at;
    });
  }
}

/** How many backends of `sql`'s database carry this application_name (brain-listener: journal LISTENs). */
export async function backendsNamed(sql: Sql, applicationName: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = ${applicationName}`;
  return row!.n;
}

/** Until some statement on `sql`'s database waits for a lock (a row another transaction holds). */
export async function untilLockWait(sql: Sql, what = "a statement waiting for a lock"): Promise<void> {
  await until(what, async () => {
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    return row!.n > 0;
  });
}
