import { isConnectionError } from "./availability.js";

/**
 * A database connection that dies under a query nobody waits on (one a driver sent for itself, on
 * a pooled or listening connection) rejects that query with the socket's error, and Node ends the
 * process on an unhandled rejection: a fresh server died so while Postgres shut down (seen in CI,
 * `read ECONNRESET`). Every caller that waits learns of the loss by its own query, so such a
 * rejection is logged and the process goes on; any other unhandled rejection still ends it.
 * Installed by each process's entry point (the server's, `brain run`/`start`, the worker's).
 */
export function surviveLostConnections(log: (message: string) => void): void {
  process.on("unhandledRejection", (reason) => {
    if (!isConnectionError(reason)) throw reason;
    log(`a database connection was lost under a query nobody awaited (${(reason as { code: string }).code})`);
  });
}
