import type { FastifyInstance } from "fastify";

/**
 * The public keys that verify the invocations Brain signs for applications' tool handlers (a JWK
 * Set; see contracts/src/invocation-signature.ts). Public: they verify, they cannot sign.
 */
export async function keyRoutes(app: FastifyInstance): Promise<void> {
  app.get("/v1/keys", async (_request, reply) =>
    reply.header("cache-control", "public, max-age=300").send(app.brain.invocations.keys()),
  );
}
