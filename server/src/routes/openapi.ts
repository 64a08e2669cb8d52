import { renderOpenApi } from "@aexhq/brain-contracts/openapi";
import type { FastifyInstance } from "fastify";

/**
 * GET /openapi.json: the API's description, public as API descriptions conventionally are (it
 * names routes and schemas, nothing of any session). Rendered once, from contracts/src/openapi.
 */
export async function openApiRoutes(app: FastifyInstance): Promise<void> {
  let text: string | undefined;
  app.get("/openapi.json", async (_request, reply) => {
    text ??= renderOpenApi();
    return reply.type("application/json; charset=utf-8").send(text);
  });
}
