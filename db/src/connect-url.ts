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
