import { BrainError, type EnvironmentRef, type McpServerSpec, McpServerSpecSchema } from "./contracts.js";

/** An MCP Environment binding: a remote MCP server (Streamable HTTP) whose tools a session uses. */
export type McpEnvironment = Extract<EnvironmentRef, { type: "mcp" }>;

export interface McpEnvironmentOptions {
  name: string;
  /** The server's Streamable HTTP endpoint, e.g. "https://tools.example.com/mcp". */
  url: string;
  /** Sent with every request to it (an Authorization header, say): sealed with the session, never shown again. */
  headers?: Record<string, string>;
}

export interface McpToolsOptions {
  /** The tools to place, by their names on the server; absent: every tool its `tools/list` advertises. */
  only?: string[];
  /** Prepended to each tool's name as the model sees it (`prefix: "gh_"`), when servers' names collide. */
  prefix?: string;
  /** Each tool's own run limit in ms (as a tool's `timeoutMs`). */
  timeoutMs?: number;
}

/** The tools of one MCP Environment, as `sessions.create({ tools })` takes them beside placed tools. */
export interface McpTools {
  readonly env: McpEnvironment;
  readonly only: readonly string[] | undefined;
}

const mcpSpecs = new WeakMap<McpEnvironment, Omit<McpServerSpec, "only" | "prefix" | "timeoutMs">>();
const toolSets = new WeakMap<McpTools, McpServerSpec>();

/**
 * An MCP Environment: `mcpEnv({ name: "tracker", url: "https://tracker.example.com/mcp", headers: {
 * authorization: "Bearer ..." } })`. Its tools are placed with `mcpTools(env)`; Brain reads their
 * schemas from the server's `tools/list` when the session is created, and its workers make the
 * calls. Its headers never enter the journal.
 */
export function mcpEnv(spec: McpEnvironmentOptions): McpEnvironment {
  const parsed = McpServerSpecSchema.pick({ name: true, url: true, headers: true }).safeParse(spec);
  if (!parsed.success) {
    throw new BrainError("invalid_options", "mcpEnv: invalid environment.", parsed.error.issues);
  }
  const ref: McpEnvironment = Object.freeze({ type: "mcp", name: parsed.data.name });
  mcpSpecs.set(ref, Object.freeze(parsed.data));
  return ref;
}

/**
 * The tools of an MCP Environment for a session: `tools: [lookup(), mcpTools(tracker, { only:
 * ["create_issue"] })]`. Their names, descriptions and schemas are the ones the server advertises.
 */
export function mcpTools(env: McpEnvironment, options: McpToolsOptions = {}): McpTools {
  const base = mcpSpecs.get(env);
  if (!base) throw new BrainError("invalid_options", "mcpTools: its env must come from mcpEnv().");
  const parsed = McpServerSpecSchema.safeParse({ ...base, ...options });
  if (!parsed.success) throw new BrainError("invalid_options", "mcpTools: invalid options.", parsed.error.issues);
  const set: McpTools = Object.freeze({ env, only: parsed.data.only && Object.freeze([...parsed.data.only]) });
  toolSets.set(set, Object.freeze(parsed.data));
  return set;
}

export function isMcpTools(value: unknown): value is McpTools {
  return typeof value === "object" && value !== null && toolSets.has(value as McpTools);
}

/** What the session body carries for a set (`mcpServers`). */
export function mcpServerSpecOf(set: McpTools): McpServerSpec | undefined {
  return toolSets.get(set);
}
