import { BrainError, EventsQuerySchema, type JournalEvent } from "@aexhq/brain-contracts";
import { getSession, sessionStatus } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { ownerOf } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { JournalPages } from "./journal-pages.js";
import { SessionParamsSchema } from "./params.js";
import { BoundedWriter } from "./stream-writer.js";

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
    const pages = new JournalPages(rt, id, request.log);

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
            const page = await pages.next(last);
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
            if (page.done) break;
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
