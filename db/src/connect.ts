import { readFileSync } from "node:fs";
import type Postgres from "postgres";
import type { Sql } from "postgres";
import { reconnectDelaySeconds, socketOf, type TlsChoice, tlsOf, withoutAnyServer } from "./connect-url.js";
import { assertSchemaName } from "./schema-name.js";
import { bindSchema } from "./tables.js";

export type { Sql } from "postgres";

/**
 * postgres.js with db/driver/'s patches (driver/patch.ts): the copy `npm run build` writes to
 * dist/driver/postgres/; the package's own types describe it. Run from source (tests under the
 * `source` export condition, `npm run test:watch`), this module is src/connect.ts and the copy
 * is still the build's.
 */
export const driverDir = new URL(
  import.meta.url.endsWith(".ts") ? "../dist/driver/postgres/" : "./driver/postgres/",
  import.meta.url,
);
const { default: postgres } = (await import(new URL("index.js", driverDir).href)) as {
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
  /**
   * A file holding the password, read again for every new connection: a password rotated while
   * Brain runs (by a secrets agent, or an IAM token refresher) is used from the next connection on.
   */
  passwordFile?: string;
  /** Seconds after which the pool closes a connection left idle; none when unset. */
  idleTimeoutSeconds?: number;
  /**
   * Puts the schema on each connection's search_path (a startup parameter), for SQL written by
   * hand (tests, a shell). Brain's own SQL names its schema and needs none, so that it runs
   * through a pooler that keeps no session state or refuses the parameter.
   */
  searchPath?: boolean;
  /**
   * A direct connection to the same database, when `url` goes through a transaction-mode pooler:
   * lanes (LISTEN, the writer's connection, leases held by session locks) open on it, and the
   * pool's own statements are sent unprepared (a pooler before PgBouncer 1.21 loses named ones).
   */
  directUrl?: string;
  /**
   * `url` goes through a pooler in transaction mode (found at start; implied by a direct URL):
   * what it sends is unprepared, and nothing relies on a backend staying the same.
   */
  pooled?: boolean;
  /**
   * A pool for reads only (BRAIN_READ_URL, a replica): its connections may land on a standby
   * (no `target_session_attrs` unless the URL says one), and its statements go unprepared,
   * as through a pooler, since nobody checked what is in front of it.
   */
  readOnly?: boolean;
}

const DEFAULT_CONNECT_TIMEOUT_S = 5;

/**
 * Through a pooler in transaction mode: statements unprepared (PgBouncer before 1.21 loses named
 * ones), and none sent behind another still unanswered: the pooler hands the backend back to its
 * pool at the first answer that ends a transaction, and answers to what was sent behind it would
 * reach nobody (PgBouncer 1.18: "got packet from server when not linked"; the query never ends).
 */
const POOLED = { prepare: false, max_pipeline: 1 };

/**
 * How a pool opens lanes of its own (see openLane): the URL and options it was made with, kept
 * beside the pool rather than on it.
 */
const origins = new WeakMap<Sql, { url: string; options: ConnectOptions }>();

/**
 * A postgres.js pool for Brain's schema: the queries of this package name their tables through
 * tables(pool), and depend on no session state. bigint columns (journal sequences) come back as
 * numbers: they stay far below 2^53.
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
 * Another pool to the same database as `pool`, for a library's own work (pg-boss), apart from the
 * pool Brain's statements wait on; `direct`: on the direct URL, when there is one (a LISTEN).
 */
export function derivePool(pool: Sql, name: string, max: number, where: { direct?: boolean } = {}): Sql {
  const origin = origins.get(pool);
  if (!origin) throw new Error("derivePool needs a pool made by connect()");
  const url = where.direct ? (origin.options.directUrl ?? origin.url) : origin.url;
  const options = { ...origin.options, max, applicationName: name };
  const derived = open(url, options, {});
  origins.set(derived, { url, options });
  return derived;
}

/**
 * A single connection of its own beside `pool`, for work that must know when its backend is gone:
 * the journal writer's transactions and the LISTEN connection. On the direct URL when there is
 * one: a pooler in transaction mode would hand each transaction to another backend.
 */
export function openLane(pool: Sql, name: string, hooks: LaneHooks): Sql {
  const origin = origins.get(pool);
  if (!origin) throw new Error("openLane needs a pool made by connect()");
  const url = origin.options.directUrl ?? origin.url;
  const options = { ...origin.options, max: 1, applicationName: name };
  // A lane lives as long as its owner wants it: no idle or lifetime rotation under it.
  const lane = open(url, options, {
    onclose: hooks.onClose,
    onnotify: hooks.onNotify,
    max_lifetime: null,
    idle_timeout: null,
  });
  origins.set(lane, { url, options });
  return lane;
}

/**
 * Whether `sql` (a pool or a lane made here) goes through a transaction-mode pooler: its
 * statements may each land on another backend, so a session lock, a LISTEN or a backend's pid
 * mean nothing on it.
 */
export function throughPooler(sql: Sql): boolean {
  const origin = origins.get(sql);
  return origin !== undefined && pooledUrl(origin.url, origin.options);
}

/**
 * Whether the lanes of `pool` (openLane) are sessions of their own: false through a pooler in
 * transaction mode with no direct URL beside it. Without, nothing may LISTEN or hold a lock.
 */
export function lanesHoldSessions(pool: Sql): boolean {
  const origin = origins.get(pool);
  if (!origin) throw new Error("lanesHoldSessions needs a pool made by connect()");
  return !pooledUrl(origin.options.directUrl ?? origin.url, origin.options);
}

function pooledUrl(url: string, options: ConnectOptions): boolean {
  return (options.pooled === true || options.directUrl !== undefined) && url !== options.directUrl;
}

function open(url: string, options: ConnectOptions, extra: Record<string, unknown>): Sql {
  const schema = assertSchemaName(options.schema);
  const tls = tlsOf(withoutAnyServer(url), (path) => readFileSync(path, "utf8"));
  const socket = socketOf(tls.url);
  const pool = postgres(socket.url, {
    ...(tls.ssl === undefined ? {} : { ssl: driverSsl(tls.ssl) }),
    ...(socket.path ? { path: socket.path } : {}),
    // Every new connection must land on a writable primary (after a fail-over, a multi-host URL's
    // next host), unless the URL asks otherwise or the pool only reads.
    ...(/[?&]target_session_attrs=/.test(url) || options.readOnly ? {} : { target_session_attrs: "read-write" }),
    ...(options.passwordFile ? { pass: passwordReader(options.passwordFile) } : {}),
    max: options.max ?? 10,
    ...(pooledUrl(url, options) || options.readOnly ? POOLED : {}),
    ...(options.idleTimeoutSeconds ? { idle_timeout: options.idleTimeoutSeconds } : {}),
    onnotice: () => {},
    connect_timeout: options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_S,
    backoff: (retries: number) => reconnectDelaySeconds(retries),
    connection: {
      application_name: options.applicationName ?? "brain",
      ...(options.searchPath ? { search_path: schema } : {}),
    },
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
    },
    ...extra,
  } as Postgres.Options<Record<string, Postgres.PostgresType>>);
  bindSchema(pool, schema);
  return pool;
}

/** The driver asks for the password on each connection: the file's current contents, trimmed. */
function passwordReader(file: string): () => string {
  return () => readFileSync(file, "utf8").trim();
}

/** The driver's `ssl` option for a TLS choice: Node's TLS options when certificates are checked. */
function driverSsl(ssl: NonNullable<TlsChoice["ssl"]>): Postgres.Options<Record<string, never>>["ssl"] {
  if (typeof ssl !== "object") return ssl;
  return {
    ...(ssl.ca ? { ca: ssl.ca } : {}),
    rejectUnauthorized: true,
    // verify-ca: the chain is checked, the name is not.
    ...(ssl.verifyName ? {} : { checkServerIdentity: () => undefined }),
  };
}
