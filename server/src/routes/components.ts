import { BrainError } from "@aexhq/brain-contracts";
import { componentExists, storeComponent } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { Admissions } from "../components/admission.js";
import { ownerOf } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";

/** Components are small, but larger than any JSON body. */
export const MAX_COMPONENT_BYTES = 64 * 1024 * 1024;
const ParamsSchema = z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/) });

/**
 * Content-addressed component uploads. A client asks first (HEAD) and uploads only what Brain
 * does not have; an upload is admitted (see admission.ts) before it is stored.
 */
export async function componentRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  const admissions = new Admissions();
  app.addContentTypeParser(
    "application/wasm",
    { parseAs: "buffer", bodyLimit: MAX_COMPONENT_BYTES },
    (_req, body, done) => done(null, body),
  );

  app.head("/v1/components/:sha256", async (request, reply) => {
    const { sha256 } = parseInput(ParamsSchema, request.params);
    return reply.status((await componentExists(rt.sql, sha256)) ? 200 : 404).send();
  });

  app.put(
    "/v1/components/:sha256",
    {
      bodyLimit: MAX_COMPONENT_BYTES,
      // Before the body is read: a server holds a bounded number of uploads at once, each until
      // it is answered or its client goes away.
      onRequest: async (_request, reply) => {
        reply.raw.once("close", admissions.enter());
      },
    },
    async (request, reply) => {
      const { sha256 } = parseInput(ParamsSchema, request.params);
      if (!Buffer.isBuffer(request.body))
        throw new BrainError("unsupported_media_type", "Upload the component as application/wasm.");
      const admitted = await admissions.admit(request.body, sha256);
      const tokenId = ownerOf(request.principal);
      const uploader = tokenId ? { tokenId, quota: await rt.quotas.guard(tokenId, "componentBytes") } : undefined;
      const component = { sha256, bytes: request.body, size: admitted.size, wit: admitted.wit };
      await storeComponent(rt.sql, component, uploader);
      return reply.status(201).send(admitted);
    },
  );
}
