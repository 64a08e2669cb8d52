/**
 * ctx.environments: one operation asked by an open call of a host connection. The caller is
 * authenticated first (its own call, still open: call_not_found / call_ended otherwise, nothing
 * journaled); from then on every operation, performed or refused, is journaled as one
 * `environment_operation` record, whose sequence the ack carries with the answer.
 */
import { BrainError, type EnvironmentOperation } from "@aexhq/brain-contracts";
import { environmentCallContext } from "@aexhq/brain-db/ops";
import type { ToolRequestAnswer } from "../hosts/link.js";
import type { Services } from "../services.js";
import { authorize } from "./authorize.js";
import { type HostCall, isJournaled, journalRefusal } from "./journal.js";
import { createOperation, deleteOperation, getOperation, listOperation, updateOperation } from "./manage.js";
import { callOperation, setupOperation } from "./run.js";

/** What ctx.environments operations use: the journal, the Environments' tables and secrets, the call's stop signal. */
export type EnvironmentControlDeps = Pick<
  Services,
  "sql" | "writer" | "secrets" | "config" | "bus" | "closing" | "egress"
>;

export interface EnvironmentRequest {
  operation: EnvironmentOperation;
  name: string | undefined;
  params: unknown;
}

export async function environmentOperation(
  rt: EnvironmentControlDeps,
  /** hostId: the host the call must be dispatched to; only that host's connections may ask. */
  ref: HostCall,
  request: EnvironmentRequest,
): Promise<ToolRequestAnswer> {
  const call: HostCall = { sessionId: ref.sessionId, seq: ref.seq, hostId: ref.hostId };
  const context = await environmentCallContext(rt.sql, call.sessionId, call.seq, call.hostId);
  if (!context) throw new BrainError("call_not_found");
  if (context.state !== "running" && context.state !== "returned") throw new BrainError("call_ended");

  const req = { operation: request.operation, name: request.name };
  try {
    const grant = authorize(context.control, request.operation, request.name);
    const named = { ...req, name: request.name ?? "" };
    switch (request.operation) {
      case "list":
        return await listOperation(rt, call, req, grant);
      case "get":
        return await getOperation(rt, call, named);
      case "create":
        return await createOperation(rt, call, named, request.params, context.bindings, grant);
      case "update":
        return await updateOperation(rt, call, named, request.params, grant);
      case "delete":
        return await deleteOperation(rt, call, named);
      case "setup":
        return await setupOperation(rt, call, named, context.deadline);
      case "call":
        return await callOperation(rt, call, named, request.params, context);
    }
  } catch (error) {
    // A refusal the operation did not journal itself (an ended call accepts no record at all).
    if (error instanceof BrainError && !isJournaled(error) && error.code !== "call_ended") {
      await journalRefusal(rt, call, req, error);
    }
    throw error;
  }
}
