import type Postgres from "postgres";
import type { Sql } from "postgres";
import { reconnectDelaySeconds, socketOf } from "./connect-url.js";
import { assertSchemaName } from "./schema-name.js";

export type { Sql } from "postgres";

/**
 * postgres.js with Brain's edits (driver/patch.ts): the copy `npm run build` writes to
 * dist/driver/postgres/; the package's own types describe it.
 */
const { default: postgres } = (await import(new URL("./driver/postgres/index.js", import.meta.url).href)) as {
  default: typeof Postgres;
};

export interface ConnectOptions {
  schema: string;
  /** Pool size. */
  max?: number;
  /** Shows in pg_stat_activity, so operators can tell Brain's connections apart. */
  applicationName?: string;
  /** Seconds to wait for a new connection before failing the queries waiting for it. */
  connectTimeoutSeconds?: number;
}

const DEFAULT_CONNECT_TIMEOUT_S = 5;

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
  } as Postgres.Options<Record<string, Postgres.PostgresType>>);
}
