import { schemaVersions } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";

/**
 * Liveness and readiness, for load balancers and orchestrators. `/healthz` answers while the
 * process runs (it touches nothing: restarting a server because Postgres is away would not bring
 * Postgres back). `/readyz` answers 200 only while the database answers, the LISTEN connection is
 * in place, a write committed within the last 10 s (a commit can hang while queries answer: a
 * primary waiting for a synchronous standby that is gone) and the applied schema version is the one this release expects (`migrations`: a
 * database migrated by a newer release, or not fully migrated, is not one to serve); otherwise
 * 503, and API requests fail fast with `database_unavailable` while the database is away.
 */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get("/healthz", async () => ({ status: "ok", serverId: app.brain.serverId }));
  app.get("/readyz", async (_request, reply) => {
    const { database, listening, committing } = app.brain.readiness();
    const schema = database ? await schemaVersions(app.brain.sql) : null;
    const migrations = schema !== null && schema.applied === schema.expected;
    const ready = database && listening && committing && migrations;
    return reply.status(ready ? 200 : 503).send({
      status: ready ? "ready" : "unavailable",
      serverId: app.brain.serverId,
      database,
      listening,
      committing,
      migrations,
      schemaVersion: { expected: schema?.expected ?? null, applied: schema?.applied ?? null },
    });
  });
}
