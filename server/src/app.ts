import { BrainError, MAX_BODY_BYTES } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance, LogController } from "fastify";
import type { Config } from "./config.js";
import { accessControl } from "./plugins/access.js";
import { authenticate, digest } from "./plugins/auth.js";
import { installBodyLimit } from "./plugins/body-limit.js";
import { installErrorHandler } from "./plugins/errors.js";
import { approvalRoutes } from "./routes/approvals.js";
import { callCallbackRoutes, callModelRoutes } from "./routes/call-callbacks.js";
import { cancelRoutes } from "./routes/cancel.js";
import { chatRoutes } from "./routes/chat.js";
import { componentRoutes } from "./routes/components.js";
import { consoleRoutes } from "./routes/console.js";
import { consoleFileRoutes } from "./routes/console-files.js";
import { eventRoutes } from "./routes/events.js";
import { healthRoutes } from "./routes/health.js";
import { hostSocketRoutes } from "./routes/host-socket.js";
import { hostRoutes } from "./routes/hosts.js";
import { keyRoutes } from "./routes/keys.js";
import { mcpRoutes } from "./routes/mcp.js";
import { messageRoutes } from "./routes/messages.js";
import { metricsRoutes } from "./routes/metrics.js";
import { namedHostRoutes, replicaSocketRoutes } from "./routes/named-hosts.js";
import { openApiRoutes } from "./routes/openapi.js";
import { sessionRoutes } from "./routes/sessions.js";
import { tokenRoutes } from "./routes/tokens.js";
import { type Runtime, startRuntime } from "./runtime.js";

declare module "fastify" {
  interface FastifyInstance {
    brain: Runtime;
    /**
     * Every route this app registered, as `METHOD /path` (HEAD routes Fastify derives included):
     * what the API description (contracts/src/openapi/routes.ts) must cover; a test compares them.
     */
    registeredRoutes: readonly string[];
  }
}

export interface BuildOptions {
  config: Config;
  /** A pool on a migrated database; the app does not close it. */
  sql: Sql;
  /** The operator token (required: main generates one in dev). */
  apiToken: string;
}

/**
 * Builds the HTTP/WebSocket app and starts the runtime (journal writer, LISTEN, actors). It does
 * not listen: main.ts and tests call listen() themselves.
 */
export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.config.logLevel,
      redact: { paths: ["req.headers.authorization", "req.headers['idempotency-key']"], remove: true },
    },
    bodyLimit: MAX_BODY_BYTES,
    // preClose has already ended streams, waiting requests and host sockets: whatever is still
    // open when the server closes is dropped rather than waited for.
    forceCloseConnections: true,
    logController: new LogController({
      disableRequestLogging: options.config.logLevel !== "debug" && options.config.logLevel !== "trace",
    }),
  });
  const routes: string[] = [];
  app.decorate("registeredRoutes", routes as readonly string[]);
  app.addHook("onRoute", (route) => {
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) routes.push(`${m} ${route.url}`);
  });
  installErrorHandler(app);
  installBodyLimit(app);
  // Bodies are JSON (and components application/wasm): no text/plain parsing behind anyone's back.
  app.removeContentTypeParser("text/plain");

  const runtime = await startRuntime(options.config, options.sql, app.log);
  app.decorate("brain", runtime as Runtime);
  app.addHook("preClose", async () => runtime.beginShutdown());
  app.addHook("onClose", async () => runtime.stop());

  // While the database is away every API request would fail anyway: say so at once, not after a
  // connection timeout. Liveness and readiness stay outside /v1.
  app.addHook("onRequest", async (request) => {
    if (request.url.startsWith("/v1/") && !runtime.availability.available) throw new BrainError("database_unavailable");
  });
  await app.register(websocket, {
    // Above the frame limit, so a host connection can answer an oversize frame before it closes
    // (see HostConnection); larger ones `ws` refuses by itself, closing with 1009.
    options: { maxPayload: MAX_BODY_BYTES },
    errorHandler: (error, socket, request) => {
      // A socket's own errors come from its peer (a frame over the limit, a protocol violation, a
      // reset connection): expected of hostile or broken clients, not a server fault.
      const code = (error as { code?: unknown }).code;
      const peer = typeof code === "string" && (code.startsWith("WS_ERR_") || /^E[A-Z]+$/.test(code));
      if (peer) request.log.warn({ err: error }, "host socket error");
      else request.log.error({ err: error }, "host socket handler failed");
      socket.terminate();
    },
  });
  await app.register(healthRoutes);
  await app.register(keyRoutes);
  await app.register(openApiRoutes);
  // The console's static files: public, they hold no data (its data routes are the operator's).
  await app.register(consoleFileRoutes);
  await app.register(hostSocketRoutes);
  await app.register(replicaSocketRoutes);
  await app.register(callCallbackRoutes);
  await app.register(callModelRoutes);
  if (options.config.metrics === "open") await app.register(metricsRoutes);
  await app.register(async (api) => {
    // Authentication (operator or application token), then each route's access rule.
    api.addHook("onRequest", authenticate(digest(options.apiToken), options.sql));
    accessControl(api);
    await api.register(tokenRoutes);
    await api.register(hostRoutes);
    await api.register(namedHostRoutes);
    await api.register(sessionRoutes);
    await api.register(messageRoutes);
    await api.register(eventRoutes);
    await api.register(chatRoutes);
    await api.register(cancelRoutes);
    await api.register(approvalRoutes);
    await api.register(mcpRoutes);
    await api.register(componentRoutes);
    if (options.config.metrics === "token") await api.register(metricsRoutes);
    await api.register(consoleRoutes);
  });
  return app;
}
