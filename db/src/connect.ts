import { readFileSync } from "node:fs";
import type Postgres from "postgres";
import type { Sql } from "postgres";
import { reconnectDelaySeconds, socketOf, type TlsChoice, tlsOf } from "./connect-url.js";
import { idleSessionTimeoutMs } from "./ops/idle-session-timeout.js";
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
  /**
   * A file holding the password, read again for every new connection: a password rotated while
   * Brain runs (by a secrets agent, or an IAM token refresher) is used from the next connection on.
   */
  passwordFile?: string;
  /** Seconds after which the pool closes a connection left idle; none when unset. */
  idleTimeoutSeconds?: number;
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

/**
 * connect(), fitted to what the role's DBA set: under an `idle_session_timeout`, Postgres ends a
 * connection idle that long, and a query the pool sends on it at that moment fails. The pool then
 * closes its own idle connections at half that period, before Postgres would.
 */
export async function connectToRole(url: string, options: ConnectOptions): Promise<Sql> {
  const sql = connect(url, options);
  const ms = await idleSessionTimeoutMs(sql).catch(async (error: unknown) => {
    await sql.end({ timeout: 1 });
    throw error;
  });
  if (ms === 0) return sql;
  await sql.end({ timeout: 1 });
  return connect(url, { ...options, idleTimeoutSeconds: ms / 2000 });
}

export interface LaneHooks {
  /** Runs synchronously when the connection closes, before any later query could be written to it. */
  onClose: () => void;
  /** Notifications (LISTEN) arriving on this connection. */
  onNotify?: (channel: string, payload: string) => void;
}

/**
 * Another pool to the same database as `pool`, for a library's own work (pg-boss), apart from the
 * pool Brain's statements wait on.
 */
export function derivePool(pool: Sql, name: string, max: number): Sql {
  const origin = origins.get(pool);
  if (!origin) throw new Error("derivePool needs a pool made by connect()");
  const derived = open(origin.url, { ...origin.options, max, applicationName: name }, {});
  origins.set(derived, { url: origin.url, options: { ...origin.options, max, applicationName: name } });
  return derived;
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
  const tls = tlsOf(url, (path) => readFileSync(path, "utf8"));
  const socket = socketOf(tls.url);
  return postgres(socket.url, {
    ...(tls.ssl === undefined ? {} : { ssl: driverSsl(tls.ssl) }),
    ...(socket.path ? { path: socket.path } : {}),
    // Every new connection must land on a writable primary (after a fail-over, a multi-host URL's
    // next host), unless the URL asks otherwise.
    ...(/[?&]target_session_attrs=/.test(url) ? {} : { target_session_attrs: "read-write" }),
    ...(options.passwordFile ? { pass: passwordReader(options.passwordFile) } : {}),
    max: options.max ?? 10,
    ...(options.idleTimeoutSeconds ? { idle_timeout: options.idleTimeoutSeconds } : {}),
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
