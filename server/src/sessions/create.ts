import {
  BrainError,
  type CreateSessionBodySchema,
  MAX_TOOLS_PER_SESSION,
  type McpImplementation,
  type McpServerSpec,
  type RecordPayload,
  resolveCallerDeadline,
  type ToolPlacement,
} from "@aexhq/brain-contracts";
import type { Upstream } from "@aexhq/brain-core/egress";
import { publicModelConfig, sealSessionSecrets, storedModelConfig } from "@aexhq/brain-core/models";
import { createSession, getSession, hostExists, newSessionId, type SessionRow } from "@aexhq/brain-db/ops";
import type { WriteOp } from "@aexhq/brain-db/writer";
import { checkTargets, sessionTargets } from "../egress/targets.js";
import { placeMcpTools } from "../mcp/placements.js";
import { ownerFilter, ownerOf, type Principal } from "../plugins/auth.js";
import { withIdempotency } from "../routes/idempotent.js";
import { checkPlacements, hasHostTools, namedHostTools } from "../routes/placements.js";
import type { Services } from "../services.js";

/** A session's creation request, as its schema parsed it. */
export type CreateSessionBody = ReturnType<typeof CreateSessionBodySchema.parse>;

/** What creating a session uses of the server. */
export type CreateSessionDeps = Pick<
  Services,
  "sql" | "egress" | "config" | "quotas" | "secrets" | "liveness" | "writer" | "serverId" | "actors"
>;

/** The tools a request places, once every check before any write has passed. */
interface Admitted {
  tools: ToolPlacement[];
  mcp: ToolPlacement[];
  namedHosts: Map<string, ToolPlacement[]>;
}

/**
 * Creates a session for `principal`: checks the request (placements, egress targets, MCP servers'
 * tools, the host), journals session_created with everything the session starts with, once per
 * Idempotency-Key when one is given, and parks the new session on this server, which owns it.
 */
export async function createSessionFor(
  rt: CreateSessionDeps,
  principal: Principal,
  body: CreateSessionBody,
  key: string | undefined,
): Promise<SessionRow> {
  const admitted = await admit(rt, principal, body);
  const op = await sessionOp(rt, principal, body, admitted);
  const row = key
    ? await withIdempotency(
        rt,
        // Keys are per application: another one's key never replays (or reveals) this session.
        principal.kind === "app" ? `session:create:${principal.tokenId}` : "session:create",
        key,
        body,
        op,
        async (r) => r.id,
        async (id) => {
          const existing = await getSession(rt.sql, id);
          if (!existing) throw new BrainError("not_found", "The session created with this key was deleted.");
          return existing;
        },
      )
    : await rt.writer.submit(op);
  if (row.owner_id === rt.serverId) rt.actors.created(row.id, row.last_seq);
  return row;
}

/** Every check a session's creation makes before it writes anything. */
async function admit(rt: CreateSessionDeps, principal: Principal, body: CreateSessionBody): Promise<Admitted> {
  await checkPlacements(rt.sql, body.tools, body.environments ?? [], rt.config.allowedGrants);
  // Nothing is sent (tools/list included) to a target the egress guard refuses.
  await checkTargets(rt.egress, sessionTargets(body));
  // MCP tools are placed from their servers' tools/list, then checked with the rest (names).
  const mcp = await mcpPlacements(body.mcpServers ?? [], {
    fetch: rt.egress.fetch,
    maxAnswerBytes: rt.config.maxUpstreamBytes,
  });
  const tools = mcp.length === 0 ? body.tools : [...body.tools, ...mcp];
  if (tools.length > MAX_TOOLS_PER_SESSION) {
    throw new BrainError(
      "invalid_request",
      `With its MCP tools the session has ${tools.length} tools; the limit is ${MAX_TOOLS_PER_SESSION}.`,
    );
  }
  if (mcp.length > 0) await checkPlacements(rt.sql, tools, body.environments ?? [], rt.config.allowedGrants, true);
  const namedHosts = namedHostTools(tools, body.namedHosts ?? []);
  if (hasHostTools(tools, new Set(namedHosts.keys())) && !body.hostId) throw new BrainError("host_required");
  // Another application's host answers like a missing one: its existence is not revealed.
  if (body.hostId && !(await hostExists(rt.sql, body.hostId, ownerFilter(principal)))) {
    throw new BrainError("invalid_request", "No host is registered with that hostId.");
  }
  return { tools, mcp, namedHosts };
}

/** The session's write: its row, secrets, environments, named hosts and session_created. */
async function sessionOp(
  rt: CreateSessionDeps,
  principal: Principal,
  body: CreateSessionBody,
  { tools, mcp, namedHosts }: Admitted,
): Promise<WriteOp<SessionRow>> {
  const id = newSessionId();
  const quota = await rt.quotas.guard(ownerOf(principal), "sessions");
  return createSession({
    ...(quota ? { quota } : {}),
    id,
    hostId: body.hostId ?? null,
    tokenId: ownerOf(principal),
    model: storedModelConfig(body.model),
    tools,
    secrets: sealSessionSecrets(rt.secrets, id, body),
    environmentControl: body.environmentControl ?? null,
    namedHosts: { byName: namedHosts, judge: rt.liveness.judgement() },
    environments: (body.environments ?? []).map(({ type, name, headers, ...config }) => ({
      name,
      type,
      config: { ...config, headerNames: Object.keys(headers ?? {}) },
    })),
    metadata: body.metadata ?? {},
    workspace: body.workspace ?? {},
    ownerId: rt.serverId,
    created: createdPayload(body, tools, mcp, namedHosts),
  });
}

function createdPayload(
  body: CreateSessionBody,
  tools: ToolPlacement[],
  mcp: ToolPlacement[],
  namedHosts: Map<string, ToolPlacement[]>,
): RecordPayload<"session_created"> {
  const deadline = resolveCallerDeadline(body);
  return {
    model: publicModelConfig(body.model),
    ...(body.system === undefined ? {} : { system: body.system }),
    tools: tools.map((t) => ({ name: t.name, env: t.env })),
    // What each MCP server advertised at placement, journaled: the contract its calls run under.
    ...(mcp.length > 0 ? { mcpTools: mcp.map(journaledMcpTool) } : {}),
    hostId: body.hostId ?? null,
    // Resolved once and journaled: every server applies the same absolute time to its calls.
    ...(deadline === null ? {} : { deadline }),
    ...(namedHosts.size > 0 ? { namedHosts: [...namedHosts.keys()] } : {}),
  };
}

/** The session's MCP placements, after refusing two servers under one name and too many tools. */
async function mcpPlacements(servers: McpServerSpec[], network: Upstream): Promise<ToolPlacement[]> {
  if (servers.length === 0) return [];
  const names = new Set<string>();
  for (const s of servers) {
    if (names.has(s.name)) {
      throw new BrainError("duplicate_environment", `Two MCP servers are named ${JSON.stringify(s.name)}.`);
    }
    names.add(s.name);
  }
  return placeMcpTools(servers, network);
}

function journaledMcpTool(t: ToolPlacement) {
  const implementation = t.implementation as McpImplementation;
  return {
    name: t.name,
    environment: t.env.name,
    tool: implementation.tool,
    taskSupport: implementation.taskSupport,
    description: t.description,
    inputSchema: t.inputSchema,
    outputSchema: t.outputSchema,
  };
}
