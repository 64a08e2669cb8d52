import { BrainError, type EnvironmentOperation } from "@aexhq/brain-contracts";
import type { ToolRequestAnswer } from "../hosts/requests.js";
import type { Runtime } from "../runtime.js";

export interface CallRef {
  sessionId: string;
  seq: number;
  /** The host the call must be dispatched to, or null when the caller is not a host connection. */
  hostId: string | null;
}

export interface EnvironmentRequest {
  operation: EnvironmentOperation;
  name: string | undefined;
  params: unknown;
}

/** ctx.environments: placeholder until Environment control lands. */
export async function environmentOperation(
  _rt: Runtime,
  _call: CallRef,
  _request: EnvironmentRequest,
): Promise<ToolRequestAnswer> {
  throw new BrainError("not_supported", "ctx.environments is being built.");
}
