import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Edit, PIPELINE_CONNECTION_EDITS, PIPELINE_POOL_EDITS, PIPELINE_QUEUE_EDITS } from "./pipeline-edits.js";

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
 * Until a release fixes it, Brain runs a copy of the driver's ES module build with small edits,
 * which `npm run build` writes to db/dist/driver/postgres/ (scripts/patch-driver.mjs calls
 * writePatchedDriver) and connect.ts loads:
 * - each connection counts its closes; a reservation or a transaction remembers the count it
 *   started with, and what it is asked to send once the count moved on is rejected with
 *   CONNECTION_CLOSED (its ROLLBACK too);
 * - a query sent on a connection without a socket is rejected the same way (and reported as
 *   handled: "not sent" would have the caller move the connection from the pool's closed queue,
 *   where it waits to be reconnected, to the queue of full ones);
 * - a close or terminate forgets the pending flush, and a flush that finds no socket drops its bytes.
 * - `target_session_attrs=read-write` refuses a hot standby, as libpq does (the driver looked
 *   only at default_transaction_read_only, which a standby of Postgres 14+ reports off);
 * - TLS to an IP address checks the certificate against that address, not "localhost";
 * - a connection answered 25006 (read-only: a demoted primary) ends once its query is answered;
 * - a transaction or a reservation shows its pool's `options`, as the pool does;
 * - an unprepared query is not described first (PgBouncer 1.18 in transaction mode loses it), and
 *   an array parameter whose type has no serializer (yet) is bound as an array literal;
 * And one addition, not a fix: pipelines, a batch of queries as one implicit transaction that
 * Postgres answers once (pipeline-edits.ts).
 * Each edit names the exact text it replaces: the build fails on a driver without it, and
 * db/test/driver-patch.test.ts names what changed.
 */
const CONNECTION_EDITS: readonly Edit[] = [
  {
    // An unprepared query is sent whole (Parse, Bind, Execute, Sync), its parameters typed by
    // Postgres as libpq and \`pg\` do: describing it first (Parse, Describe, Flush, then Bind)
    // never ends through PgBouncer 1.18 in transaction mode, which gives the backend back to its
    // pool before the description comes.
    find: `    q.describeFirst = q.onlyDescribe || (parameters.length && !q.prepared)
`,
    replace: `    q.describeFirst = q.onlyDescribe || (parameters.length && !q.prepared && q.prepare)
`,
  },
  {
    // An array parameter is bound as an array literal when its type is unknown, text or has no
    // serializer: an unprepared query's types are what the driver inferred, and the array types'
    // serializers come only after the first connection fetched them (before, `sql.array([1, 2])` went as "1,2" and an empty one as "").
    find: `      parameters[i] = x = type in options.serializers
        ? options.serializers[type](x)
        : '' + x
`,
    replace: `      parameters[i] = x = Array.isArray(x) && (type === 0 || type === 25 || !(type in options.serializers))
        ? arraySerializer(x, null, options, type)
        : type in options.serializers
        ? options.serializers[type](x)
        : '' + x
`,
  },
  {
    // A server that refuses writes as read-only (25006: a primary demoted under this connection,
    // or a standby after a fail-over) will go on refusing them: the connection leaves the pool
    // before its query's error is delivered and ends once it is idle (a transaction's ROLLBACK
    // done); the pool opens the next one where target_session_attrs says.
    find: `    query = results = errorResponse = null
    result = new Result()
`,
    replace: `    errorResponse && errorResponse.code === '25006' && !ending && end()
    query = results = errorResponse = null
    result = new Result()
`,
  },
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
  {
    // `read-write` as libpq means it: not a hot standby either. Postgres 14+ reports
    // default_transaction_read_only = off on a standby, which the driver took for a primary.
    find: `      (x === 'read-write' && xs.default_transaction_read_only === 'on') ||
`,
    replace: `      (x === 'read-write' && (xs.default_transaction_read_only === 'on' || xs.in_hot_standby === 'on')) ||
`,
  },
  {
    // TLS to an IP address: Node checks the certificate against options.host, or "localhost"
    // when it is missing, which the driver left out for addresses (no SNI for those).
    find: `      servername: net.isIP(socket.host) ? undefined : socket.host
`,
    replace: `      servername: net.isIP(socket.host) ? undefined : socket.host,
      host: socket.host
`,
  },
];

const CLOSED = "q.reject(Errors.connection('CONNECTION_CLOSED', options))";

const POOL_EDITS: readonly Edit[] = [
  {
    // Every instance (a transaction, a reservation) shows its pool's options, as the pool does:
    // Brain's tables are named by the schema its pool was made for (tables.ts).
    find: `    Object.assign(sql, {
      types: typed,
`,
    replace: `    Object.assign(sql, {
      options,
      types: typed,
`,
  },
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

/** The edits, by the name of the driver's module (in its `src/`) they apply to. */
const MODULES: Readonly<Record<string, readonly Edit[]>> = {
  "connection.js": [...CONNECTION_EDITS, ...PIPELINE_CONNECTION_EDITS],
  "index.js": [...POOL_EDITS, ...PIPELINE_POOL_EDITS],
  "queue.js": PIPELINE_QUEUE_EDITS,
};

/**
 * The driver module `name`'s source with its edits applied; the source unchanged for a module
 * without edits; null when an edit's text is missing or not unique (another version of the driver).
 */
export function patchDriverSource(name: string, source: string): string | null {
  let patched = source;
  for (const { find, replace } of MODULES[name] ?? []) {
    const at = patched.indexOf(find);
    if (at < 0 || patched.indexOf(find, at + 1) >= 0) return null;
    patched = patched.slice(0, at) + replace + patched.slice(at + find.length);
  }
  return patched;
}

/**
 * Writes the driver's ES module build (`sourceDir`, the package's `src/`: its modules import only
 * each other and Node's) into `targetDir` with the edits applied. Throws, writing nothing, when an
 * edit does not apply.
 */
export function writePatchedDriver(sourceDir: string, targetDir: string): void {
  const files = readdirSync(sourceDir).filter((f) => f.endsWith(".js"));
  const out = files.map((name) => {
    const patched = patchDriverSource(name, readFileSync(join(sourceDir, name), "utf8"));
    if (patched === null)
      throw new Error(`postgres.js changed: ${name} no longer takes db/src/driver/patch.ts's edits`);
    return { name, patched };
  });
  for (const name of Object.keys(MODULES))
    if (!files.includes(name)) throw new Error(`postgres.js changed: no ${name} in ${sourceDir}`);
  mkdirSync(targetDir, { recursive: true });
  for (const { name, patched } of out) writeFileSync(join(targetDir, name), patched);
}
