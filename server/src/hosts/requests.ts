import type { HostFrame } from "@aexhq/brain-contracts";
import { environmentOperation } from "../environments/control.js";
import type { Runtime } from "../runtime.js";

/** Frames that ask for something on behalf of an open call and get an answer (ack `value`). */
export type ToolRequestFrame = Extract<HostFrame, { type: "model" | "environment" }>;

export interface ToolRequestAnswer {
  /** The journal record that holds the answer (model_call_ended, environment_operation). */
  sequence: number | null;
  value: unknown;
}

/** Who asks: a host connection, limited to the calls dispatched to its host. */
export interface Requester {
  hostId: string;
}

export async function answerToolRequest(
  rt: Runtime,
  who: Requester,
  frame: ToolRequestFrame,
): Promise<ToolRequestAnswer> {
  const call = { sessionId: frame.sessionId, seq: frame.sequence, hostId: who.hostId };
  switch (frame.type) {
    case "model":
      return rt.toolModels.call(call, frame.request);
    case "environment":
      return environmentOperation(rt, call, { operation: frame.operation, name: frame.name, params: frame.params });
  }
}
