import type { FastifyInstance } from "fastify";

/**
 * GET /metrics: the Prometheus exposition of this server's registry. Registered behind the
 * operator token (BRAIN_METRICS=token, the default: it names tools) or open (BRAIN_METRICS=open,
 * for a scraper on a private network); app.ts decides where. The gauges are read now.
 */
export async function metricsRoutes(app: FastifyInstance): Promise<void> {
  const registry = app.brain.prometheus?.registry;
  if (!registry) return;
  app.get("/metrics", async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
