import { BrainError } from "@aexhq/brain-contracts";
import { appendRecords, callExists, endCalls, getSession } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseInput } from "../plugins/validate.js";
import { SessionParamsSchema } from "./params.js";

const CallParamsSchema = z.strictObject({ id: z.uuid(), seq: z.coerce.number().int().positive() });

/**
 * Cancellation. A turn is cancelled by the Agentloop that runs it (it alone knows which calls it
 * is about to make), so the API journals the request and wakes it. One call is cancelled here
 * directly: a conditional terminal write, so a call that already ended keeps its outcome.
 */
export async function cancelRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;

  app.post("/v1/sessions/:id/cancel", async (request) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const r = await rt.writer.submit(appendRecords(id, [{ kind: "cancel_requested", payload: { by: "api" } }]));
    const first = r.records[0];
    if (!first) throw new BrainError((await getSession(rt.sql, id)) ? "session_ended" : "not_found");
    return { sequence: first.seq };
  });

  app.post("/v1/sessions/:id/calls/:seq/cancel", async (request) => {
    const { id, seq } = parseInput(CallParamsSchema, request.params);
    const ended = await rt.writer.submit(
      endCalls({ sessionId: id, seqs: [seq] }, { status: "cancelled", cause: "sdk_cancel" }),
    );
    if (ended.length === 0) {
      if (!(await callExists(rt.sql, id, seq))) throw new BrainError("call_not_found");
      return { cancelled: false, sequence: null };
    }
    return { cancelled: true, sequence: ended[0]!.endSeq };
  });
}
