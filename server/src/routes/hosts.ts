import { randomBytes, randomUUID } from "node:crypto";
import { RegisterHostBodySchema } from "@aexhq/brain-contracts";
import { insertHost } from "@aexhq/brain-db";
import type { FastifyInstance } from "fastify";
import { digest } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";

export async function hostRoutes(app: FastifyInstance): Promise<void> {
  app.post("/v1/hosts", async (request, reply) => {
    const body = parseInput(RegisterHostBodySchema, request.body ?? {});
    const id = randomUUID();
    const token = `bht_${randomBytes(32).toString("base64url")}`;
    await insertHost(app.brain.sql, id, body.name ?? null, digest(token));
    return reply.status(201).send({ id, token });
  });
}
