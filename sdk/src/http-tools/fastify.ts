import type { IncomingMessage, ServerResponse } from "node:http";
import type { PlacedTool } from "../tool.js";
import { type ToolHandlerOptions, toolHandler } from "./node-handler.js";

export interface FastifyToolsOptions extends ToolHandlerOptions {
  /** The route inside the plugin's prefix; default "/". */
  path?: string;
}

/**
 * What the plugin uses of a Fastify instance, structurally: the SDK does not depend on fastify.
 * Methods (not function properties), so a real FastifyInstance with its overloads fits.
 */
export interface FastifyToolsInstance {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    contentType: string,
    parser: (request: unknown, payload: unknown, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
  post(
    path: string,
    handler: (request: { raw: IncomingMessage }, reply: { raw: ServerResponse; hijack(): void }) => void,
  ): unknown;
}

/**
 * The Application tool extension as a Fastify plugin: `app.register(fastifyTools([lookup({ prefix:
 * "customer:" })]), { prefix: "/tools" })` serves POST /tools exactly as `toolHandler` does. Inside
 * the plugin's own context the body is left to the handler (no Fastify parser reads it), so hostile
 * bodies get the same Brain error answers under both adapters.
 */
export function fastifyTools(
  tools: readonly PlacedTool[],
  options: FastifyToolsOptions = {},
): (instance: FastifyToolsInstance) => Promise<void> {
  const handle = toolHandler(tools, options);
  return async function brainTools(instance) {
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser("*", (_request, _payload, done) => done(null));
    instance.post(options.path ?? "/", (request, reply) => {
      reply.hijack();
      handle(request.raw, reply.raw);
    });
  };
}
