import { randomUUID } from "node:crypto";
import {
  BrainError,
  CreateSessionBodySchema,
  ListSessionsQuerySchema,
  MAX_TOOLS_PER_SESSION,
  type McpImplementation,
  type McpServerSpec,
  resolveCallerDeadline,
  type Session,
  type ToolPlacement,
} from "@aexhq/brain-contracts";
import type { Upstream } from "@aexhq/brain-core/egress";
import { publicModelConfig, sealSessionSecrets, storedModelConfig } from "@aexhq/brain-core/models";
import {
  createSession,
  deleteSession,
  endSession,
  getSession,
  hostExists,
  listSessions,
  type SessionCursor,
  type SessionRow,
  sessionNamedHosts,
} from "@aexhq/brain-db";
import type { FastifyInstance } from "fastify";
import { checkTargets, sessionTargets } from "../egress/targets.js";
import { placeMcpTools } from "../mcp/placements.js";
import { ownerFilter, ownerOf } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { withIdempotency } from "./idempotent.js";
import { idempotencyKey, SessionParamsSchema } from "./params.js";
import { checkPlacements, hasHostTools, namedHostTools } from "./placements.js";

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    status: row.status,
    hostId: row.host_id,
    tools: (row.tools as ToolPlacement[]).map((t) => t.name),
    lastSequence: row.last_seq,
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
    endedAt: row.ended_at ? row.ended_at.toISOString() : null,
  };
}

export async function sessionRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;

  app.post("/v1/sessions", async (request, reply) => {
    const body = parseInput(CreateSessionBodySchema, request.body);
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
    if (body.hostId && !(await hostExists(rt.sql, body.hostId, ownerFilter(request.principal)))) {
      throw new BrainError("invalid_request", "No host is registered with that hostId.");
    }
    const id = randomUUID();
    const quota = await rt.quotas.guard(ownerOf(request.principal), "sessions");
    const op = createSession({
      ...(quota ? { quota } : {}),
      id,
      hostId: body.hostId ?? null,
      tokenId: ownerOf(request.principal),
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
      created: {
        model: publicModelConfig(body.model),
        tools: tools.map((t) => ({ name: t.name, env: t.env })),
        // What each MCP server advertised at placement, journaled: the contract its calls run under.
        ...(mcp.length > 0 ? { mcpTools: mcp.map(journaledMcpTool) } : {}),
        hostId: body.hostId ?? null,
        // Resolved once and journaled: every server applies the same absolute time to its calls.
        ...deadlineField(resolveCallerDeadline(body)),
        ...(namedHosts.size > 0 ? { namedHosts: [...namedHosts.keys()] } : {}),
      },
    });
    const key = idempotencyKey(request.headers);
    const row = key
      ? await withIdempotency(
          rt,
          // Keys are per application: another one's key never replays (or reveals) this session.
          request.principal.kind === "app" ? `session:create:${request.principal.tokenId}` : "session:create",
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
    return reply.status(201).send(toSession(row));
  });

  app.get("/v1/sessions", async (request) => {
    const query = parseInput(ListSessionsQuerySchema, request.query);
    const page = await listSessions(rt.sql, query.limit, decodeCursor(query.cursor), ownerFilter(request.principal));
    return {
      sessions: page.rows.map(toSession),
      nextCursor: page.next ? Buffer.from(JSON.stringify(page.next)).toString("base64url") : null,
    };
  });

  app.get("/v1/sessions/:id", async (request) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const row = await getSession(rt.sql, id);
    if (!row) throw new BrainError("not_found");
    return toSession(row);
  });

  /** The placements as advertised at creation: reattaching hosts check theirs against these. */
  app.get("/v1/sessions/:id/tools", async (request) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const row = await getSession(rt.sql, id);
    if (!row) throw new BrainError("not_found");
    return { hostId: row.host_id, tools: row.tools, namedHosts: Object.keys(await sessionNamedHosts(rt.sql, id)) };
  });

  app.post("/v1/sessions/:id/end", async (request) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    // Its host, wherever it is connected, is told to release the handlers (the commit's keys).
    await rt.writer.submit(endSession(id, "ended by request"));
    const row = await getSession(rt.sql, id);
    if (!row) throw new BrainError("not_found");
    return toSession(row);
  });

  app.delete("/v1/sessions/:id", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const result = await rt.writer.submit(deleteSession(id));
    if (!result.deleted) throw new BrainError("not_found");
    rt.actors.get(id)?.stop("ended");
    return reply.status(204).send();
  });
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

function deadlineField(deadline: number | null): { deadline?: number } {
  return deadline === null ? {} : { deadline };
}

function decodeCursor(cursor: string | undefined): SessionCursor | null {
  if (!cursor) return null;
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { us?: unknown; id?: unknown };
    if (typeof value.us === "string" && /^\d{1,20}$/.test(value.us) && typeof value.id === "string") {
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value.id))
        return { us: value.us, id: value.id };
    }
  } catch {
    // fall through
  }
  throw new BrainError("invalid_request", "Malformed cursor.");
}
