/**
 * Every ctx.environments operation, performed or refused, is one `environment_operation` record:
 * `{ call, operation, name, outcome: { status, error? } }`, plus `value` for a successful call.
 * Never a header value: records carry names, codes and messages built from them.
 */
import type { BrainError, EnvironmentOperation, RecordPayload } from "@aexhq/brain-contracts";
import {
  type EnvironmentOperationResult,
  type EnvironmentOperationWrite,
  type HostCallRef,
  journalEnvironmentOperation,
} from "@aexhq/brain-db/ops";
import type { Services } from "../services.js";

export type JournalDeps = Pick<Services, "writer">;

/** A call of a host connection: the only callers ctx.environments has. */
export type HostCall = HostCallRef;

export interface OperationRequest {
  operation: EnvironmentOperation;
  name: string | undefined;
}

export type OperationOutcome =
  | { status: "ok" }
  | { status: "error"; error: { code: string; message: string; details?: unknown } };

export const OK: OperationOutcome = { status: "ok" };

export function failed(error: BrainError | { code: string; message: string; details?: unknown }): OperationOutcome {
  const e: { code: string; message: string; details?: unknown } = { code: error.code, message: error.message };
  if (error.details !== undefined) e.details = error.details;
  return { status: "error", error: e };
}

export function recordPayload(
  call: HostCall,
  request: OperationRequest,
  outcome: OperationOutcome,
  extra: Record<string, unknown> = {},
): RecordPayload<"environment_operation"> {
  return { call: call.seq, operation: request.operation, name: request.name ?? null, outcome, ...extra };
}

type Spec<R> = Omit<EnvironmentOperationWrite<R>, "sessionId" | "call" | "hostId">;

export function journal<R>(rt: JournalDeps, call: HostCall, spec: Spec<R>): Promise<EnvironmentOperationResult<R>> {
  return rt.writer.submit(
    journalEnvironmentOperation({ sessionId: call.sessionId, call: call.seq, hostId: call.hostId, ...spec }),
  );
}

const recorded = new WeakSet<BrainError>();

/** A refusal whose record is already written (by the operation's own journal write). */
export function journaledError(error: BrainError): BrainError {
  recorded.add(error);
  return error;
}

export function isJournaled(error: BrainError): boolean {
  return recorded.has(error);
}

/** Records a refusal (after the caller was authenticated); the refusal is then answered. */
export async function journalRefusal(rt: JournalDeps, call: HostCall, request: OperationRequest, error: BrainError) {
  // Validation details may quote what was sent (headers among it): the code and message suffice.
  const outcome = failed({ code: error.code, message: error.message });
  await journal(rt, call, { requireOpenCall: true, payload: () => recordPayload(call, request, outcome) });
}
