import postgres, { type Sql } from "postgres";
import { assertSchemaName } from "./schema-name.js";

export type { Sql } from "postgres";

export interface ConnectOptions {
  schema: string;
  /** Pool size. */
  max?: number;
  /** Shows in pg_stat_activity, so operators can tell Brain's connections apart. */
  applicationName?: string;
  /** Seconds to wait for a new connection before failing the queries waiting for it. */
  connectTimeoutSeconds?: number;
}

/** Opened a connection, or a database answered after an outage: the longest wait between tries. */
export const MAX_RECONNECT_DELAY_S = 1;
const DEFAULT_CONNECT_TIMEOUT_S = 5;

/**
 * The driver's wait (seconds) before reconnect attempt `retries`: doubling from 50 ms up to the
 * cap, with jitter in the upper half so that a pool's connections do not retry in lockstep.
 */
export function reconnectDelaySeconds(retries: number, random: () => number = Math.random): number {
  return Math.min(MAX_RECONNECT_DELAY_S, 0.05 * 2 ** retries) * (0.5 + random() / 2);
}

/**
 * How a pool opens lanes of its own (see openLane): the URL and options it was made with, kept
 * beside the pool rather than on it.
 */
const origins = new WeakMap<Sql, { url: string; options: ConnectOptions }>();

/**
 * A postgres.js pool whose every connection has Brain's schema on its search_path, so the SQL in
 * this package never names a schema. bigint columns (journal sequences) come back as numbers:
 * they stay far below 2^53.
 *
 * Reconnection is tuned for a database that restarts (upgrades, fail-overs): a connection that
 * failed is tried again within a second (postgres.js grows the delay to 20 s by default, which
 * would keep a server down long after Postgres is back), and a connection attempt gives up after
 * a few seconds so that requests fail fast while the database is away.
 */
export function connect(url: string, options: ConnectOptions): Sql {
  const sql = open(url, options, {});
  origins.set(sql, { url, options });
  return sql;
}

export interface LaneHooks {
  /** Runs synchronously when the connection closes, before any later query could be written to it. */
  onClose: () => void;
  /** Notifications (LISTEN) arriving on this connection. */
  onNotify?: (channel: string, payload: string) => void;
}

/**
 * A single connection of its own beside `pool`, for work that must know when its backend is gone:
 * the journal writer's transactions and the LISTEN connection.
 */
export function openLane(pool: Sql, name: string, hooks: LaneHooks): Sql {
  const origin = origins.get(pool);
  if (!origin) throw new Error("openLane needs a pool made by connect()");
  return open(
    origin.url,
    { ...origin.options, max: 1, applicationName: name },
    // A lane lives as long as its owner wants it: no idle or lifetime rotation under it.
    { onclose: hooks.onClose, onnotify: hooks.onNotify, max_lifetime: null, idle_timeout: null },
  );
}

/**
 * libpq's way of naming a Unix socket, `?host=/run/postgresql` (a directory), which postgres.js does
 * not read from a URL: the URL without it, and the socket's path (`<dir>/.s.PGSQL.<port>`).
 */
export function socketOf(url: string): { url: string; path?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  const dir = parsed.searchParams.get("host");
  if (!dir?.startsWith("/")) return { url };
  parsed.searchParams.delete("host");
  const port = parsed.searchParams.get("port") ?? (parsed.port || "5432");
  parsed.searchParams.delete("port");
  return { url: parsed.toString(), path: `${dir.replace(/\/$/, "")}/.s.PGSQL.${port}` };
}

function open(url: string, options: ConnectOptions, extra: Record<string, unknown>): Sql {
  const schema = assertSchemaName(options.schema);
  const socket = socketOf(url);
  return postgres(socket.url, {
    ...(socket.path ? { path: socket.path } : {}),
    max: options.max ?? 10,
    onnotice: () => {},
    connect_timeout: options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_S,
    backoff: (retries: number) => reconnectDelaySeconds(retries),
    connection: { search_path: schema, application_name: options.applicationName ?? "brain" },
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
    },
    ...extra,
  } as postgres.Options<Record<string, postgres.PostgresType>>);
}
