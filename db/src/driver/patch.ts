import { register } from "node:module";

/**
 * postgres.js 3.4.9 crashes the process, or leaves a connection that never sends again, when a
 * connection closes under a reserved connection or a transaction (upstream issues #1066, #1154 and
 * #1208, unfixed in 3.4.x). `sql.begin` sends its ROLLBACK on the connection whose socket is
 * already gone: the write is deferred with setImmediate, finds the socket null and throws where
 * nobody can catch it (seen in CI: a server died during a Postgres restart). When a deferred write
 * came before the close instead, the close cancels its flush but leaves it marked pending: every
 * later write on that connection is buffered and never sent, and each reconnect of it times out.
 *
 * Until a release fixes it, the process entry points load the driver with small edits: a query on
 * a closed connection is rejected with CONNECTION_CLOSED (and reported as handled: "not sent"
 * would have the caller move the connection from the pool's closed queue, where it waits to be
 * reconnected, to the queue of full ones), a close or terminate forgets the pending flush, and a
 * flush that finds no socket drops its bytes. Each edit names the exact text it replaces: a driver
 * without it is loaded unchanged, and db/test/driver-patch.test.ts fails.
 */
const EDITS: readonly { find: string; replace: string }[] = [
  {
    find: `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))
`,
    replace: `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))

    if (!socket)
      return (queryError(q, Errors.connection('CONNECTION_CLOSED', options)), true)
`,
  },
  {
    find: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)
`,
    replace: `  function nextWrite(fn) {
    if (!socket)
      return (nextWriteTimer !== null && clearImmediate(nextWriteTimer), chunk = nextWriteTimer = null, false)
    const x = socket.write(chunk, fn)
`,
  },
  {
    find: `    clearImmediate(nextWriteTimer)
    if (socket) {
`,
    replace: `    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    if (socket) {
`,
  },
  {
    find: `    incomings = null
    clearImmediate(nextWriteTimer)
    socket.removeListener('data', data)
`,
    replace: `    incomings = null
    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    socket.removeListener('data', data)
`,
  },
];

/** The driver module the edits apply to (its ES module build). */
export const DRIVER_CONNECTION_MODULE = /\/node_modules\/postgres\/src\/connection\.js$/;

/** `source` with every edit applied, or null when any edit's text is missing (another version). */
export function patchDriverSource(source: string): string | null {
  let patched = source;
  for (const { find, replace } of EDITS) {
    const at = patched.indexOf(find);
    if (at < 0 || patched.indexOf(find, at + 1) >= 0) return null;
    patched = patched.slice(0, at) + replace + patched.slice(at + find.length);
  }
  return patched;
}

/**
 * Loads postgres.js with the edits from here on. Call it before anything imports the driver: an
 * entry point calls it first and then imports the rest dynamically (static imports are all loaded
 * before the entry's first line runs).
 */
export function installDriverPatch(): void {
  register("./hooks.js", import.meta.url);
}
