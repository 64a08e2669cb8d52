// The pure parts of connecting, apart from connect.ts (which loads the driver): the URL's Unix
// socket and the reconnect backoff.

/** Opened a connection, or a database answered after an outage: the longest wait between tries. */
export const MAX_RECONNECT_DELAY_S = 1;

/**
 * The driver's wait (seconds) before reconnect attempt `retries`: doubling from 50 ms up to the
 * cap, with jitter in the upper half so that a pool's connections do not retry in lockstep.
 */
export function reconnectDelaySeconds(retries: number, random: () => number = Math.random): number {
  return Math.min(MAX_RECONNECT_DELAY_S, 0.05 * 2 ** retries) * (0.5 + random() / 2);
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

const SESSION_ATTRS = new Set(["any", "read-write", "read-only", "primary", "standby", "prefer-standby"]);

/**
 * `url` without `target_session_attrs=any`: libpq's default, which the driver does not know (it
 * refused to connect); without the parameter it takes any server, as `any` asks.
 */
export function withoutAnyServer(url: string): string {
  return url.replace(/([?&])target_session_attrs=any(&|$)/, (_, before: string, after: string) =>
    after ? before : "",
  );
}

/**
 * Why `url` is not a Postgres URL Brain can use, or null. Several hosts are allowed, as libpq and
 * the driver take them for fail-over (`postgres://u@h1:5432,h2:5432/db?target_session_attrs=
 * read-write`), which the WHATWG URL parser refuses; a Unix socket is `?host=/dir`.
 */
export function databaseUrlProblem(url: string): string | null {
  const match = /^(postgres|postgresql):\/\/(?:[^@/?#]*@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(url);
  if (!match) return "a postgres:// URL";
  const [, , hostList = "", , query = ""] = match;
  const params = new URLSearchParams(query);
  for (const host of hostList === "" ? [] : hostList.split(",")) {
    const parsed = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(host);
    if (!parsed) return `an invalid host ${JSON.stringify(host)}`;
    const port = parsed[2] === undefined ? 5432 : Number(parsed[2]);
    if (!(port >= 1 && port <= 65535)) return `an invalid port in ${JSON.stringify(host)}`;
  }
  const mode = params.get("sslmode");
  if (mode !== null && !SSL_MODES.has(mode)) return `sslmode=${mode} is not one of ${[...SSL_MODES].join(", ")}`;
  const attrs = params.get("target_session_attrs");
  if (attrs !== null && !SESSION_ATTRS.has(attrs)) return `target_session_attrs=${attrs} is not supported`;
  return null;
}

/** The hosts of `url` as `host:port`, its credentials and parameters left out (for banners and logs). */
export function databaseHosts(url: string): string[] {
  const match = /^[a-z]+:\/\/(?:[^@/?#]*@)?([^/?#]*)/.exec(url);
  const hosts = match?.[1] ? match[1].split(",") : [];
  return hosts.map((h) => (/:\d+$/.test(h) ? h : `${h}:5432`));
}

/** libpq's TLS modes; the driver takes the first three as they are. */
const SSL_MODES = new Set(["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]);

export interface TlsChoice {
  /** The URL without the parameters read here (the driver would send them to Postgres). */
  url: string;
  /** The driver's `ssl` option, or undefined when the URL says nothing of TLS. */
  ssl?: false | "allow" | "prefer" | "require" | { ca?: string; rejectUnauthorized: true; verifyName: boolean };
}

/**
 * libpq's `sslmode` and `sslrootcert`, as managed Postgres documents them: `verify-full` checks the
 * certificate against the CA file (or the system's, `sslrootcert=system`) and the host name,
 * `verify-ca` only the CA. The driver reads `sslmode` alone and would send `sslrootcert` to
 * Postgres as a setting, so both are taken off the URL here.
 */
export function tlsOf(url: string, readCa: (path: string) => string): TlsChoice {
  const at = url.indexOf("?");
  if (at < 0) return { url };
  const params = new URLSearchParams(url.slice(at + 1));
  const mode = params.get("sslmode") ?? params.get("ssl");
  const root = params.get("sslrootcert");
  if (mode === null && root === null) return { url };
  for (const p of ["sslmode", "ssl", "sslrootcert"]) params.delete(p);
  const rest = params.toString();
  const bare = rest === "" ? url.slice(0, at) : `${url.slice(0, at)}?${rest}`;
  const chosen = mode ?? "verify-full";
  if (!SSL_MODES.has(chosen)) throw new Error(`sslmode=${chosen} is not one of ${[...SSL_MODES].join(", ")}`);
  if (chosen === "disable") return { url: bare, ssl: false };
  if (chosen === "allow" || chosen === "prefer" || chosen === "require") return { url: bare, ssl: chosen };
  const ca = root === null || root === "system" ? undefined : readCa(root);
  return { url: bare, ssl: { ...(ca ? { ca } : {}), rejectUnauthorized: true, verifyName: chosen === "verify-full" } };
}
