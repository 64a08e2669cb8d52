import type { FastifyInstance } from "fastify";

/**
 * Liveness and readiness, for load balancers and orchestrators. `/healthz` answers while the
 * process runs (it touches nothing: restarting a server because Postgres is away would not bring
 * Postgres back). `/readyz` answers 200 only while the database answers and the LISTEN connection
 * is in place; otherwise 503, and API requests fail fast with `database_unavailable`.
 */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get("/healthz", async () => ({ status: "ok", serverId: app.brain.serverId }));
  app.get("/readyz", async (_request, reply) => {
    const { database, listening } = app.brain.readiness();
    const ready = database && listening;
    return reply
      .status(ready ? 200 : 503)
      .send({ status: ready ? "ready" : "unavailable", serverId: app.brain.serverId, database, listening });
  });
}
