import { randomBytes, randomUUID } from "node:crypto";
import {
  APP_TOKEN_PREFIX,
  type AppToken,
  BrainError,
  CreateTokenBodySchema,
  UpdateTokenBodySchema,
} from "@aexhq/brain-contracts";
import {
  type AppTokenRow,
  insertAppToken,
  listAppTokens,
  readAppToken,
  revokeAppToken,
  setTokenQuotas,
} from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { digest } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";
import { closeRevoked } from "../revocation.js";

const ParamsSchema = z.strictObject({ id: z.uuid() });

function toAppToken(row: AppTokenRow): AppToken {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
    quotas: {
      sessions: row.max_sessions,
      hosts: row.max_hosts,
      openCalls: row.max_open_calls,
      componentBytes: row.max_component_bytes === null ? null : Number(row.max_component_bytes),
    },
  };
}

/**
 * Application tokens, administered by the operator alone (ROUTE_ACCESS). The token is generated
 * here, answered once and stored as its SHA-256; the prefix makes a leaked one greppable.
 */
export async function tokenRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;

  app.post("/v1/tokens", async (request, reply) => {
    const body = parseInput(CreateTokenBodySchema, request.body);
    const token = `${APP_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const row = await insertAppToken(rt.sql, randomUUID(), body.name, digest(token), body.quotas);
    return reply.status(201).send({ ...toAppToken(row), token });
  });

  app.get("/v1/tokens", async () => ({ tokens: (await listAppTokens(rt.sql)).map(toAppToken) }));

  /** Changes a token's quotas (a revoked one's too): what it already holds stays, new work is checked. */
  app.patch("/v1/tokens/:id", async (request) => {
    const { id } = parseInput(ParamsSchema, request.params);
    const body = parseInput(UpdateTokenBodySchema, request.body);
    if (!(await setTokenQuotas(rt.sql, id, body.quotas))) throw new BrainError("not_found");
    rt.quotas.forget(id);
    return toAppToken((await readAppToken(rt.sql, id))!);
  });

  /** Revokes; the row stays (its sessions and hosts still name it). Revoking again is a no-op. */
  app.delete("/v1/tokens/:id", async (request) => {
    const { id } = parseInput(ParamsSchema, request.params);
    const row = await revokeAppToken(rt.sql, id);
    if (!row) throw new BrainError("not_found");
    // Here at once; every other server at its next heartbeat.
    await closeRevoked(rt);
    return toAppToken(row);
  });
}
