import type { HostFrame } from "@aexhq/brain-contracts";
import { type EnvironmentControlDeps, environmentOperation } from "../environments/control.js";
import type { Services } from "../services.js";
import type { ToolRequestAnswer } from "./link.js";

export type ToolRequestDeps = EnvironmentControlDeps & Pick<Services, "toolModels">;

/** Frames that ask for something on behalf of an open call and get an answer (ack `value`). */
export type ToolRequestFrame = Extract<HostFrame, { type: "model" | "environment" }>;

/** Who asks: a host connection, limited to the calls dispatched to its host. */
export interface Requester {
  hostId: string;
}

export async function answerToolRequest(
  rt: ToolRequestDeps,
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
