import { randomBytes, randomUUID } from "node:crypto";
import { RegisterHostBodySchema } from "@aexhq/brain-contracts";
import { insertHost } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { digest, ownerOf } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";

export async function hostRoutes(app: FastifyInstance): Promise<void> {
  app.post("/v1/hosts", async (request, reply) => {
    const body = parseInput(RegisterHostBodySchema, request.body ?? {});
    const id = randomUUID();
    const token = `bht_${randomBytes(32).toString("base64url")}`;
    // Owned by the caller's application token: only its sessions may be placed on it.
    const owner = ownerOf(request.principal);
    const quota = await app.brain.quotas.guard(owner, "hosts");
    await insertHost(app.brain.sql, id, body.name ?? null, digest(token), owner, quota);
    return reply.status(201).send({ id, token });
  });
}
