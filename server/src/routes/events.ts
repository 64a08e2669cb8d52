import { BrainError, EventsQuerySchema } from "@aexhq/brain-contracts";
import { getSession } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { ownerOf } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { EventStream } from "./event-stream.js";
import { JournalPages } from "./journal-pages.js";
import { SessionParamsSchema } from "./params.js";
import { ndjson } from "./stream-format.js";

/**
 * The resumable event stream: NDJSON, one journal record per line, strictly after `after`.
 * With follow, it subscribes before reading the backlog and tracks the last sequence sent, so
 * records committed meanwhile are neither missed nor repeated (sequences are dense per session and
 * commit in order). It ends when the session ends or is deleted, or when the client goes away.
 * The next page is read only once the socket has taken the last one (BoundedWriter), and a reader
 * that stops reading is dropped after BRAIN_STREAM_STALL_MS: per-stream memory is bounded.
 * With live (and follow), model calls' text as it streams goes between the records (LiveFeed).
 */
export async function eventRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  app.get("/v1/sessions/:id/events", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const query = parseInput(EventsQuerySchema, request.query);
    if (query.live && !query.follow) throw new BrainError("invalid_request", "live=true needs follow=true.");
    if (!(await getSession(rt.sql, id))) throw new BrainError("not_found");

    const res = reply.raw;
    const pages = new JournalPages(rt, id, request.log);
    const stream = new EventStream(rt, id, res, pages, { ...query, log: request.log, format: ndjson });
    request.raw.on("close", stream.end);
    // Ended at shutdown, and if the token that opened it is revoked.
    res.on("close", rt.streams.add(ownerOf(request.principal), stream.end));
    reply.hijack();
    res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
    // A follower with nothing to read yet still learns at once that the stream is open.
    res.flushHeaders();
    await stream.start();
  });
}
