import { BrainError, EventsQuerySchema, type JournalEvent } from "@aexhq/brain-contracts";
import { getSession, readRecords, sessionStatus } from "@aexhq/brain-db";
import type { FastifyInstance } from "fastify";
import { parseInput } from "../plugins/validate.js";
import { SessionParamsSchema } from "./params.js";

const PAGE = 500;

/**
 * The resumable event stream: NDJSON, one journal record per line, strictly after `after`.
 * With follow, it subscribes before reading the backlog and tracks the last sequence sent, so
 * records committed meanwhile are neither missed nor repeated (sequences are dense per session and
 * commit in order). It ends when the session ends or is deleted, or when the client goes away.
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

    const end = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      res.end();
      // Unsent lines for a reader that stopped reading would keep the socket open.
      if (res.writableNeedDrain) res.destroy();
    };
    const write = async (line: string) => {
      // A reader that stopped reading must not hold the stream (or a shutdown) forever.
      if (!res.write(line)) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
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
            const rows = await readRecords(rt.sql, id, last, PAGE);
            for (const r of rows) {
              if (closed) return;
              const event: JournalEvent = {
                sequence: r.seq,
                kind: r.kind,
                payload: r.payload as JournalEvent["payload"],
                createdAt: r.created_at.toISOString(),
              };
              await write(`${JSON.stringify(event)}\n`);
              last = r.seq;
              if (r.kind === "session_ended") finished = true;
            }
            if (rows.length < PAGE) break;
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
    rt.streams.add(end);
    res.on("close", () => rt.streams.delete(end));
    reply.hijack();
    res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
    // A follower with nothing to read yet still learns at once that the stream is open.
    res.flushHeaders();
    await pump();
  });
}
