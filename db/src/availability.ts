import type { Sql } from "postgres";

/**
 * Errors that say the database, or our connection to it, is unavailable, as opposed to a statement
 * that was wrong: postgres.js connection codes, socket errors, SQLSTATE class 08 (connection
 * exception), the shutdown / start-up / overload answers of a restarting server, and a write
 * refused as read-only (a primary demoted under the connection, which the driver then replaces),
 * and a Citus coordinator's lost connection to a worker inside a transaction (CITUS_NODE_LOST).
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return (
    code.startsWith("CONNECTION_") ||
    code === "CONNECT_TIMEOUT" ||
    code.startsWith("08") ||
    code === "57P01" || // admin_shutdown: pg_terminate_backend, or a fast shutdown
    code === "57P02" || // crash_shutdown
    code === "57P03" || // cannot_connect_now: starting up or shutting down
    code === "53300" || // too_many_connections
    code === "25006" || // read_only_sql_transaction: this connection's server is no longer the primary
    SOCKET_ERRORS.has(code) ||
    (code === "XX000" && CITUS_NODE_LOST.test(String((error as { message?: unknown }).message)))
  );
}

/**
 * Citus's answer when a worker it was writing to in the transaction went away (a restart, a
 * crash): an internal error by its code, a lost connection by its meaning. Its other losses of a
 * worker connection carry SQLSTATE 08006.
 */
const CITUS_NODE_LOST = /^failure on connection marked as essential: /;

const SOCKET_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** How long the database has to answer after a lost connection before it is taken for away. */
const CONFIRM_MS = 2_000;

export interface AvailabilityOptions {
  /** How often to try the database while it is away. */
  probeMs?: number;
  /** Told of every change: false when the database went away, true when it answers again. */
  onChange?: (available: boolean) => void;
}

/**
 * What this process knows of its database: reachable, or away since some moment. A connection
 * error seen anywhere marks it away; then a probe runs until the database answers, and whoever
 * cares (the readiness probe, requests that fail fast, the rescans after an outage) is told.
 */
export class DatabaseAvailability {
  private awaySince: number | null = null;
  private upSince = Date.now();
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  private confirming = false;
  private readonly probeMs: number;

  constructor(
    private readonly sql: Sql,
    private readonly options: AvailabilityOptions = {},
  ) {
    this.probeMs = options.probeMs ?? 250;
  }

  get available(): boolean {
    return this.awaySince === null;
  }

  /** Milliseconds the database has answered without interruption; 0 while it is away. */
  upFor(now = Date.now()): number {
    return this.awaySince === null ? now - this.upSince : 0;
  }

  /**
   * Whether `error` says the database or a connection to it is gone. If so, the database is asked
   * at once, and marked away only if it does not answer: one connection that Postgres ended (a
   * role's idle_session_timeout, a DBA's pg_terminate_backend) must not fail every request.
   */
  observe(error: unknown): boolean {
    if (!isConnectionError(error)) return false;
    void this.confirm();
    return true;
  }

  /**
   * A background task's failure: observed (see observe), and handed to `warn` unless it is the
   * database going away, which is said once, by the availability itself.
   */
  warnUnlessAway(error: unknown, warn: (error: unknown) => void): void {
    if (!this.observe(error)) warn(error);
  }

  /** Something just talked to the database successfully. */
  markAvailable(): void {
    if (this.awaySince === null) return;
    this.awaySince = null;
    this.upSince = Date.now();
    this.options.onChange?.(true);
  }

  markAway(): void {
    if (this.closed || this.awaySince !== null) return;
    this.awaySince = Date.now();
    this.options.onChange?.(false);
    this.schedule();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.probe);
  }

  private schedule(): void {
    clearTimeout(this.probe);
    this.probe = setTimeout(() => void this.try(), this.probeMs);
    this.probe.unref();
  }

  private async confirm(): Promise<void> {
    if (this.closed || this.awaySince !== null || this.confirming) return;
    this.confirming = true;
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      // A half-open connection never answers: silence counts as away too.
      timer = setTimeout(() => reject(new Error("no answer")), CONFIRM_MS);
    });
    try {
      await Promise.race([this.sql`SELECT 1`.execute(), silent]);
    } catch {
      this.markAway();
    } finally {
      clearTimeout(timer);
      this.confirming = false;
    }
  }

  private async try(): Promise<void> {
    if (this.closed || this.awaySince === null) return;
    try {
      await this.sql`SELECT 1`;
      this.markAvailable();
    } catch {
      this.schedule();
    }
  }
}
