import type { FastifyInstance } from "fastify";

/** Registered only after migrations have been applied, so an answer means ready. */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get("/healthz", async () => ({ status: "ok", serverId: app.brain.serverId }));
}
