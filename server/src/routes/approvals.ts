import { ApproveCallBodySchema, BrainError, DenyCallBodySchema, type ToolPlacement } from "@aexhq/brain-contracts";
import { inputProblem } from "@aexhq/brain-core/schemas";
import { approveCall, denyCall, getSession, listApprovals } from "@aexhq/brain-db/ops";
import { enqueueWorkerJob } from "@aexhq/brain-db/queue";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { Principal } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { SessionParamsSchema } from "./params.js";

const CallParamsSchema = z.strictObject({ id: z.uuid(), seq: z.coerce.number().int().positive() });

/** Who a decision is journaled as made by. */
function decider(principal: Principal): string {
  return principal.kind === "operator" ? "operator" : principal.tokenId;
}

/**
 * Approval gates: the calls of a session waiting for a person, and the decisions on them. A
 * decision binds the call as it waits (its sequence and input hash are in the list); a call that
 * is no longer waiting (decided, cancelled, timed out, its session ended) refuses one with
 * `call_not_waiting`. Approval makes the call pending for whichever server holds its host (or,
 * for a tool Brain runs, commits its worker job); denial ends it with a `denied` error the model
 * reads.
 */
export async function approvalRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;

  app.get("/v1/sessions/:id/approvals", async (request) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    if (!(await getSession(rt.sql, id))) throw new BrainError("not_found");
    return { approvals: await listApprovals(rt.sql, id) };
  });

  app.post("/v1/sessions/:id/calls/:seq/approve", async (request) => {
    const { id, seq } = parseInput(CallParamsSchema, request.params);
    const body = parseInput(ApproveCallBodySchema, request.body ?? {});
    if (body.input !== undefined) await checkEdited(id, seq, body.input);
    const by = decider(request.principal);
    const decision = body.input === undefined ? { by } : { by, input: body.input };
    const r = await rt.writer.submit(
      approveCall(id, seq, decision, (tx, call, owner) => enqueueWorkerJob(rt.boss, tx, call, owner)),
    );
    return { call: seq, decision: "approved", sequence: r.sequence };
  });

  app.post("/v1/sessions/:id/calls/:seq/deny", async (request) => {
    const { id, seq } = parseInput(CallParamsSchema, request.params);
    const body = parseInput(DenyCallBodySchema, request.body ?? {});
    const by = decider(request.principal);
    const r = await rt.writer.submit(
      denyCall(id, seq, body.reason === undefined ? { by } : { by, reason: body.reason }),
    );
    return { call: seq, decision: "denied", sequence: r.sequence };
  });

  /** Edited input must pass the tool's input schema, as the model's had to. */
  async function checkEdited(sessionId: string, seq: number, input: unknown): Promise<void> {
    const waiting = (await listApprovals(rt.sql, sessionId)).find((a) => a.call === seq);
    if (!waiting) throw new BrainError("call_not_waiting");
    const session = await getSession(rt.sql, sessionId);
    const tool = (session?.tools as ToolPlacement[] | undefined)?.find((t) => t.name === waiting.tool);
    const problem = tool ? inputProblem(tool.inputSchema, input) : null;
    if (problem?.status === "error") {
      const what = `The edited input does not fit ${waiting.tool}'s schema: ${problem.error.message}`;
      throw new BrainError("invalid_request", what, problem.error.details);
    }
  }
}
