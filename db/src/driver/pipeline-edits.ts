/** One textual edit of a driver module: `find` must occur exactly once (see patch.ts). */
export interface Edit {
  find: string;
  replace: string;
}

/**
 * Pipelines: the journal writer's one-round-trip batch as one implicit transaction, which
 * Postgres answers once (writer/batch.ts's sendOneTrip). postgres.js ends every query with a
 * Sync: Postgres then answers each statement on its own (one send, one wake-up of the server's
 * event loop each) and a batch needs BEGIN and COMMIT of its own. A query whose options say
 * `pipelined` goes without it. Postgres runs the statements up to the next Sync, which the first
 * query not so marked carries, as one implicit transaction, commits it at that Sync and sends
 * every answer then (the protocol's pipelining; libpq's pipeline mode works the same way).
 *
 * - A pipelined query resolves at its CommandComplete, before the commit; the one carrying the
 *   Sync at the ReadyForQuery that follows the commit. Postgres sends every answer at that Sync.
 *   Whether the pipeline committed is what its last query says.
 * - When a statement fails, Postgres skips the rest up to the Sync and rolls back: at the
 *   ReadyForQuery, the queries skipped are rejected with the same error, the last among them (the
 *   queries before the failure have resolved, and nothing of theirs is kept either).
 *   Prepared-statement retries do not apply (a query retried alone would run in a transaction of
 *   its own).
 * - A pipelined query the driver holds back, because it first describes a statement it has not
 *   prepared or because the pipeline is full, is sent with a Flush: its answer comes at once,
 *   and what queued behind it follows. When such a query fails before its pipeline's Sync was
 *   sent, the driver sends the Sync itself and rejects the pipeline's later queries as they come,
 *   up to and including the one that would have ended it.
 * - A pipeline goes to the socket in one write, when the query that carries its Sync is asked to
 *   run. postgres.js writes as soon as it holds 1 KiB, and holds less until the event loop's next
 *   check phase: a batch went out in pieces, Postgres woke for each and waited in between for the
 *   next (`ClientRead`), and the small tail that commits it waited for whatever the process did
 *   meanwhile (under load, handling the answers of the batch before). A pipelined query is held
 *   whatever its size (`write`'s `held`: until the Sync, or that check phase if none comes), and
 *   the query that carries the Sync writes everything at once.
 * - Every connection sets TCP_NODELAY. A pipeline's tail is a small write after a large one, and
 *   Postgres answers nothing until the Sync, so Nagle's algorithm held the tail until the
 *   server's delayed acknowledgement (up to 40 ms); answers to single statements used to carry
 *   that acknowledgement.
 * - A reserved connection that frees up sends every queued query it can take, not one per
 *   answer: a pipeline that queued behind a described statement goes out whole.
 */
export const PIPELINE_CONNECTION_EDITS: readonly Edit[] = [
  {
    find: `    , ExecuteUnnamed = Buffer.concat([b().E().str(b.N).i32(0).end(), Sync])
`,
    replace: `    , ExecuteUnnamed = Buffer.concat([b().E().str(b.N).i32(0).end(), Sync])
    , ExecuteInPipeline = b().E().str(b.N).i32(0).end()
`,
  },
  {
    find: `  const sent = Queue()
`,
    replace: `  const sent = Queue()
  let pipelines = 0
    , pipelineOpen = false
    , pipelineFailed = null
`,
  },
  {
    find: `    if (q.cancelled)
      return
`,
    replace: `    if (q.cancelled)
      return

    if (pipelineFailed) {
      const error = pipelineFailed
      q.options.pipelined || (pipelineFailed = null)
      queryError(q, error)
      return true
    }
`,
  },
  {
    find: `      build(q)
      return write(toBuffer(q))
`,
    replace: `      build(q)
      if (q.options.pipelined) {
        pipelineOpen || (pipelineOpen = true, pipelines++)
        q.pipeline = pipelines
        const x = toBuffer(q)
        return (q.describeFirst || sent.length >= max_pipeline
          ? write(q.describeFirst ? x : Buffer.concat([x, Flush])) && false
          : write(x, null, true))
          && (!q.options.onexecute || q.options.onexecute(connection))
      }
      const closing = pipelineOpen
      closing && (q.pipeline = pipelines, pipelineOpen = false)
      return write(toBuffer(q)) && (!closing || chunk === null || nextWrite())
`,
  },
  {
    find: `        ? Execute('', q.cursorRows)
        : ExecuteUnnamed
`,
    replace: `        ? Execute('', q.cursorRows)
        : q.options.pipelined ? ExecuteInPipeline : ExecuteUnnamed
`,
  },
  {
    find: "query.describeFirst && !query.onlyDescribe && (write(prepared(query)), query.describeFirst = false)",
    replace:
      "query.describeFirst && !query.onlyDescribe && (write(query.options.pipelined ? Buffer.concat([prepared(query), Flush]) : prepared(query)), query.describeFirst = false)",
  },
  {
    find: `    if (query.cursorFn) {
      result.count && query.cursorFn(result)
      write(Sync)
    }
  }
`,
    replace: `    if (query.cursorFn) {
      result.count && query.cursorFn(result)
      write(Sync)
    }
    query.options.pipelined && !errorResponse && pipelineAnswered()
  }

  function pipelineAnswered() {
    query.resolve(results || result)
    query = results = null
    result = new Result()
    while (sent.length && (query = sent.shift()) && (query.active = true, query.cancelled))
      Connection(options).cancel(query.state, query.cancelled.resolve, query.cancelled.reject)
    query || (connection.reserved && connection.reserved())
  }
`,
  },
  {
    find: `  function ErrorResponse(x) {
    if (query) {
      (query.cursorFn || query.describeFirst) && write(Sync)
      errorResponse = Errors.postgres(parseError(x))
`,
    replace: `  function ErrorResponse(x) {
    if (query) {
      const unsynced = query.options.pipelined && pipelineOpen && query.pipeline === pipelines
      ;(query.cursorFn || query.describeFirst || unsynced) && write(Sync)
      errorResponse = Errors.postgres(parseError(x))
      unsynced && (pipelineOpen = false, pipelineFailed = errorResponse)
`,
  },
  {
    find: `  function ReadyForQuery(x) {
    if (query) {
`,
    replace: `  function ReadyForQuery(x) {
    if (query && errorResponse && query.pipeline) {
      errored(errorResponse)
      while (sent.length && sent.peek().pipeline === query.pipeline)
        queryError(sent.shift(), errorResponse)
      query = null
    } else if (query) {
`,
  },
  {
    find: `  function write(x, fn) {
    chunk = chunk ? Buffer.concat([chunk, x]) : Buffer.from(x)
    if (fn || chunk.length >= 1024)
`,
    replace: `  function write(x, fn, held) {
    chunk = chunk ? Buffer.concat([chunk, x]) : Buffer.from(x)
    if (fn || !held && chunk.length >= 1024)
`,
  },
  {
    find: `      keep_alive && socket.setKeepAlive && socket.setKeepAlive(true, 1000 * keep_alive)
`,
    replace: `      keep_alive && socket.setKeepAlive && socket.setKeepAlive(true, 1000 * keep_alive)
      socket.setNoDelay && socket.setNoDelay(true)
`,
  },
];

/** The reserved connection's queue, drained as far as the connection takes (patch.ts applies it after its own). */
export const PIPELINE_POOL_EDITS: readonly Edit[] = [
  {
    find: `    c.reserved = () => queue.length
      ? c.execute(queue.shift())
      : move(c, reserved)
`,
    replace: `    c.reserved = () => {
      while (queue.length)
        if (!c.execute(queue.shift())) return
      move(c, reserved)
    }
`,
  },
];

/** The queue's first element, for the ReadyForQuery edit above. */
export const PIPELINE_QUEUE_EDITS: readonly Edit[] = [
  {
    find: `    push: (x) => (xs.push(x), x),
`,
    replace: `    push: (x) => (xs.push(x), x),
    peek: () => xs[index],
`,
  },
];
