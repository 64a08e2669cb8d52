import { register } from "node:module";

/**
 * postgres.js 3.4.9 crashes the process, or leaves a connection that never sends again, when a
 * connection closes under a reserved connection or a transaction (upstream issues #1066, #1154 and
 * #1208, unfixed in 3.4.x). `sql.begin` sends its ROLLBACK on the connection whose socket is
 * already gone: the write is deferred with setImmediate, finds the socket null and throws where
 * nobody can catch it (seen in CI: a server died during a Postgres restart). When a deferred write
 * came before the close instead, the close cancels its flush but leaves it marked pending: every
 * later write on that connection is buffered and never sent, and each reconnect of it times out.
 * And the pool reconnects a closed connection for its next query while the transaction or the
 * reservation that held it may still send: its statements would run in someone else's session.
 *
 * Until a release fixes it, the process entry points load the driver with small edits:
 * - each connection counts its closes; a reservation or a transaction remembers the count it
 *   started with, and what it is asked to send once the count moved on is rejected with
 *   CONNECTION_CLOSED (its ROLLBACK too);
 * - a query sent on a connection without a socket is rejected the same way (and reported as
 *   handled: "not sent" would have the caller move the connection from the pool's closed queue,
 *   where it waits to be reconnected, to the queue of full ones);
 * - a close or terminate forgets the pending flush, and a flush that finds no socket drops its bytes.
 * Each edit names the exact text it replaces: a driver without it is loaded unchanged, and
 * db/test/driver-patch.test.ts fails.
 */
const CONNECTION_EDITS: readonly Edit[] = [
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
  {
    find: `    socket.removeAllListeners()
    socket = null
`,
    replace: `    socket.removeAllListeners()
    socket = null
    connection.closes = (connection.closes || 0) + 1
`,
  },
];

const CLOSED = "q.reject(Errors.connection('CONNECTION_CLOSED', options))";

const POOL_EDITS: readonly Edit[] = [
  {
    find: `    move(c, reserved)
    c.reserved = () => queue.length
`,
    replace: `    move(c, reserved)
    const closes = c.closes || 0
    c.reserved = () => queue.length
`,
  },
  {
    find: `    function handler(q) {
      c.queue === full
        ? queue.push(q)
`,
    replace: `    function handler(q) {
      if ((c.closes || 0) !== closes)
        return ${CLOSED}
      c.queue === full
        ? queue.push(q)
`,
  },
  {
    find: `    let savepoints = 0
      , connection
`,
    replace: `    let savepoints = 0
      , closes = 0
      , connection
`,
  },
  {
    find: `      function handler(q) {
        q.catch(e => uncaughtError || (uncaughtError = e))
`,
    replace: `      function handler(q) {
        q.catch(e => uncaughtError || (uncaughtError = e))
        if ((c.closes || 0) !== closes)
          return ${CLOSED}
`,
  },
  {
    find: `    function onexecute(c) {
      connection = c
`,
    replace: `    function onexecute(c) {
      connection = c
      closes = c.closes || 0
`,
  },
];

interface Edit {
  find: string;
  replace: string;
}

/** The driver's modules the edits apply to (its ES module build), by the end of their URL. */
const MODULES: readonly { path: RegExp; edits: readonly Edit[] }[] = [
  { path: /\/node_modules\/postgres\/src\/connection\.js$/, edits: CONNECTION_EDITS },
  { path: /\/node_modules\/postgres\/src\/index\.js$/, edits: POOL_EDITS },
];

/**
 * The source of the driver module at `url` with its edits applied; the source unchanged when `url`
 * is no module of the driver; null when it is and an edit's text is missing or not unique (another
 * version of the driver).
 */
export function patchDriverSource(url: string, source: string): string | null {
  const module = MODULES.find((m) => m.path.test(url));
  if (!module) return source;
  let patched = source;
  for (const { find, replace } of module.edits) {
    const at = patched.indexOf(find);
    if (at < 0 || patched.indexOf(find, at + 1) >= 0) return null;
    patched = patched.slice(0, at) + replace + patched.slice(at + find.length);
  }
  return patched;
}

/** Whether `url` is a module of the driver that patchDriverSource edits. */
export function isDriverModule(url: string): boolean {
  return MODULES.some((m) => m.path.test(url));
}

/**
 * Loads postgres.js with the edits from here on. Call it before anything imports the driver: an
 * entry point calls it first and then imports the rest dynamically (static imports are all loaded
 * before the entry's first line runs).
 */
export function installDriverPatch(): void {
  // Once per process: a second registration would edit the edited source again.
  const flag = Symbol.for("brain.driverPatch");
  const scope = globalThis as { [flag]?: boolean };
  if (scope[flag]) return;
  scope[flag] = true;
  register("./hooks.js", import.meta.url);
}
