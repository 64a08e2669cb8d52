import {
  BrainError,
  CreateSessionBodySchema,
  ForkSessionBodySchema,
  ListSessionsQuerySchema,
  type Session,
  type ToolPlacement,
} from "@aexhq/brain-contracts";
import {
  deleteSession,
  endSession,
  getSession,
  listSessions,
  type SessionCursor,
  type SessionRow,
  sessionNamedHosts,
} from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { ownerFilter } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { createSessionFor } from "../sessions/create.js";
import { forkSessionFor } from "../sessions/fork.js";
import { idempotencyKey, SessionParamsSchema } from "./params.js";

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
    ...(row.forked_from && row.forked_at
      ? { forkedFrom: { session: row.forked_from, sequence: Number(row.forked_at) } }
      : {}),
  };
}

export async function sessionRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;

  app.post("/v1/sessions", async (request, reply) => {
    const body = parseInput(CreateSessionBodySchema, request.body);
    const row = await createSessionFor(rt, request.principal, body, idempotencyKey(request.headers));
    return reply.status(201).send(toSession(row));
  });

  app.post("/v1/sessions/:id/fork", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const body = parseInput(ForkSessionBodySchema, request.body);
    const row = await forkSessionFor(rt, request.principal, id, body);
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
