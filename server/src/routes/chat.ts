import { BrainError, ChatRequestSchema, PostMessageBodySchema } from "@aexhq/brain-contracts";
import { openTurn } from "@aexhq/brain-db/ops";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ownerOf } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { EventStream } from "./event-stream.js";
import { JournalPages } from "./journal-pages.js";
import { journalMessage } from "./messages.js";
import { SessionParamsSchema } from "./params.js";
import { UI_STREAM_HEADERS, UiMessageStream } from "./ui-message-stream.js";

/**
 * The AI SDK's chat protocol over a session, so a `useChat` front end talks to Brain directly:
 * POST journals the last UI message (a user's text) as the session's next message, once per UI
 * message id, and answers its turn as a UI message stream; GET …/chat/stream answers the turn
 * still running (the first unanswered message's) from its start, or 204 when there is none,
 * which is what `useChat({ resume: true })` asks after a reload. Both render from the journal
 * and the live text every server hears: no Redis, any server, after a fail-over too.
 */
export async function chatRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  app.post("/v1/sessions/:id/chat", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const body = parseInput(ChatRequestSchema, request.body);
    if (body.trigger === "regenerate-message") {
      throw new BrainError("invalid_request", "A session's journal is append-only: send the message again instead.");
    }
    const last = body.messages[body.messages.length - 1]!;
    if (last.role !== "user") throw new BrainError("invalid_request", "The last message must be the user's.");
    const text = last.parts.map((p) => (p.type === "text" ? (p.text ?? "") : "")).join("");
    const message = parseInput(PostMessageBodySchema, { text });
    const sequence = await journalMessage(rt, id, { text: message.text, deadline: null }, `chat:${last.id}`, { text });
    return streamTurn(request, reply, id, sequence);
  });

  app.get("/v1/sessions/:id/chat/stream", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const turn = await openTurn(rt.sql, id);
    if (turn === "missing") throw new BrainError("not_found");
    if (turn === null) return reply.status(204).send();
    return streamTurn(request, reply, id, turn);
  });

  async function streamTurn(request: FastifyRequest, reply: FastifyReply, sessionId: string, messageSeq: number) {
    const res = reply.raw;
    const format = new UiMessageStream(sessionId, messageSeq);
    if (request.method === "HEAD") {
      reply.hijack();
      res.writeHead(200, UI_STREAM_HEADERS);
      return void res.end();
    }
    const pages = new JournalPages(rt, sessionId, request.log);
    const options = { after: messageSeq, follow: true, live: true, log: request.log, format };
    const stream = new EventStream(rt, sessionId, res, pages, options);
    request.raw.on("close", stream.end);
    res.on("close", rt.streams.add(ownerOf(request.principal), stream.end));
    reply.hijack();
    res.writeHead(200, UI_STREAM_HEADERS);
    res.write(format.start());
    await stream.start();
  }
}
