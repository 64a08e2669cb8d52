import type { ModelConfig, ToolPlacement } from "@aexhq/brain-contracts";

/** A session as its Agentloop and the dispatcher see it (read when its actor starts). */
export interface SessionInfo {
  id: string;
  hostId: string | null;
  /** The named hosts serving some of its tools, by host environment name. */
  namedHosts: Record<string, string>;
  model: ModelConfig;
  tools: ToolPlacement[];
  /** The application token that owns it (null: the operator). */
  tokenId: string | null;
}

/** What routing a call needs of its session. */
export type RoutedSession = Pick<SessionInfo, "id" | "hostId" | "namedHosts" | "tools">;
