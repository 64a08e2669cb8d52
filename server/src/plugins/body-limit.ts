import { BrainError, MAX_BODY_BYTES } from "@aexhq/brain-contracts";
import type { FastifyInstance } from "fastify";

/**
 * The largest refused body Brain still reads (and discards) after answering. Fastify's own check
 * answers 413 with `Connection: close`, and Node then closes the socket while the client is still
 * sending: the client sees EPIPE or a reset, not the answer. Answered here instead, before the body
 * is read and without closing, Node drains the body once the answer is sent and the client reads
 * the 413. Beyond this size the connection is closed after the answer, as before: draining would
 * cost more than a client that sends such a body deserves.
 */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

/**
 * Refuses a body its route would refuse, from its Content-Length, before reading any of it: in
 * preParsing, so authentication (onRequest) still answers first.
 */
export function installBodyLimit(app: FastifyInstance): void {
  app.addHook("preParsing", async (request, reply) => {
    const header = request.headers["content-length"];
    if (header === undefined) return;
    const length = Number(header);
    const limit = request.routeOptions.bodyLimit ?? MAX_BODY_BYTES;
    if (!Number.isFinite(length) || length <= limit) return;
    if (length > MAX_DRAINED_BYTES) reply.header("connection", "close");
    throw new BrainError("body_too_large", `The body is ${length} bytes; the limit here is ${limit}.`);
  });
}
