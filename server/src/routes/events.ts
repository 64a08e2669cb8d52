import { BrainError, EventsQuerySchema, type JournalEvent } from "@aexhq/brain-contracts";
import { getSession, readRecordPage, sessionStatus } from "@aexhq/brain-db";
import type { FastifyInstance } from "fastify";
import { ownerOf } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { SessionParamsSchema } from "./params.js";
import { BoundedWriter } from "./stream-writer.js";

/**
 * One page of records: what a reader holds at a time besides its socket's buffer. Bounded in
 * bytes as well as rows, so a journal of large records costs a reader no more than a small one.
 */
const PAGE_ROWS = 500;
const PAGE_BYTES = 256 * 1024;
/** Fewest rows asked for: after a page of large records, the next asks for fewer (see pump). */
const MIN_PAGE_ROWS = 8;

/**
 * The resumable event stream: NDJSON, one journal record per line, strictly after `after`.
 * With follow, it subscribes before reading the backlog and tracks the last sequence sent, so
 * records committed meanwhile are neither missed nor repeated (sequences are dense per session and
 * commit in order). It ends when the session ends or is deleted, or when the client goes away.
 * The next page is read only once the socket has taken the last one (BoundedWriter), and a reader
 * that stops reading is dropped after BRAIN_STREAM_STALL_MS: per-stream memory is bounded.
 */
export async function eventRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  app.get("/v1/sessions/:id/events", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const query = parseInput(EventsQuerySchema, request.query);
    if (!(await getSession(rt.sql, id))) throw new BrainError("not_found");

    let last = query.after;
    let closed = false;
    let reading = false;
    let again = false;
    let finished = false;
    const res = reply.raw;
    const out = new BoundedWriter(res, rt.config.streamStallMs);
    // Rows asked per page: shrinks after a page cut by bytes, so the database does not size many
    // large rows that will not be sent; grows back after pages of small ones.
    let pageRows = PAGE_ROWS;
    // The backlog is read from BRAIN_READ_URL's replica (when set) up to where the replica ends,
    // then from the primary: a replica shows a prefix of each journal, so nothing is skipped, and
    // the live tail and every wake-up read what has committed.
    let replica = rt.readSql !== rt.sql;
    const readPage = async () => {
      const rows = { rows: pageRows, bytes: PAGE_BYTES };
      if (replica) {
        try {
          return { page: await readRecordPage(rt.readSql, id, last, rows), fromReplica: true };
        } catch (error) {
          request.log.warn({ err: error }, "event stream: the read replica failed; reading the primary");
          replica = false;
        }
      }
      return { page: await readRecordPage(rt.sql, id, last, rows), fromReplica: false };
    };

    const end = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      res.end();
      // Unsent lines for a reader that stopped reading would keep the socket open.
      if (res.writableNeedDrain) res.destroy();
    };
    const pump = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          for (;;) {
            const { page, fromReplica } = await readPage();
            const cutByBytes = page.rows.length < pageRows && page.more;
            pageRows = cutByBytes ? Math.max(MIN_PAGE_ROWS, page.rows.length * 2) : Math.min(PAGE_ROWS, pageRows * 2);
            for (const r of page.rows) {
              if (closed) return;
              const event: JournalEvent = {
                sequence: r.seq,
                kind: r.kind,
                payload: r.payload as JournalEvent["payload"],
                createdAt: r.created_at.toISOString(),
              };
              const written = await out.write(`${JSON.stringify(event)}\n`);
              if (written === "stalled") {
                request.log.warn(
                  { sessionId: id, sequence: last, buffered: out.stalledWith, stallMs: rt.config.streamStallMs },
                  "event stream reader stalled; closed",
                );
              }
              if (written !== "ok") return end();
              last = r.seq;
              if (r.kind === "session_ended") finished = true;
            }
            if (!page.more) {
              if (!fromReplica) break;
              replica = false;
            }
          }
          if (!query.follow || finished) break;
          // Deleted, or ended before the cursor (a stream resumed after session_ended): done.
          const session = await sessionStatus(rt.sql, id);
          if (!session || (session.status === "ended" && last >= session.lastSeq)) finished = true;
        } while (again && !closed && !finished);
        if (!query.follow || finished) end();
      } catch (error) {
        request.log.warn({ err: error }, "event stream failed");
        end();
      } finally {
        reading = false;
      }
    };

    const unsubscribe = query.follow ? rt.bus.onSession(id, () => void pump()) : () => {};
    request.raw.on("close", end);
    // Ended at shutdown, and if the token that opened it is revoked.
    res.on("close", rt.streams.add(ownerOf(request.principal), end));
    reply.hijack();
    res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
    // A follower with nothing to read yet still learns at once that the stream is open.
    res.flushHeaders();
    await pump();
  });
}
