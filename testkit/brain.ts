import { randomBytes } from "node:crypto";
import { connectToRole } from "@aexhq/brain-db/connect";
import { buildApp, parseConfig } from "@aexhq/brain-server";
import type { FastifyInstance } from "fastify";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { LOOPBACK_EGRESS_ENV } from "./egress.js";
import { checkJournalShapes } from "./journal-shapes.js";
import { TEST_SECRET_KEY } from "./secrets.js";
import { type ServerProcess, spawnServer } from "./server-process.js";

export interface InProcessBrain {
  url: string;
  token: string;
  app: FastifyInstance;
  db: TestDatabase;
  close(): Promise<void>;
}

/**
 * A real Brain server inside the test process: its own database, a real listening socket, real
 * WebSockets. Tests that kill processes use spawnServer() instead.
 */
export async function startBrain(
  options: { env?: Record<string, string>; db?: TestDatabase } = {},
): Promise<InProcessBrain> {
  const db = options.db ?? (await createTestDatabase({ max: 20 }));
  const token = `test-${randomBytes(16).toString("hex")}`;
  const config = parseConfig({
    DATABASE_URL: db.url,
    BRAIN_PORT: "0",
    BRAIN_LOG_LEVEL: "error",
    BRAIN_SECRET_KEY: TEST_SECRET_KEY,
    ...LOOPBACK_EGRESS_ENV,
    ...options.env,
  });
  // The server's own pool, as a server makes it: no search_path, so SQL that does not name its
  // schema fails here as it would behind a pooler (and in the pooler leg, it is behind one).
  const sql = await connectToRole(db.url, {
    schema: "brain",
    max: 20,
    applicationName: "brain-server",
    ...(db.serverDirectUrl ? { directUrl: db.serverDirectUrl } : {}),
  });
  const app = await buildApp({ config, sql, apiToken: token });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    url,
    token,
    app,
    db,
    async close() {
      await app.close();
      await sql.end({ timeout: 1 });
      // A database the test passed in is the test's to check and drop.
      if (options.db) return;
      try {
        await checkJournalShapes(db.sql);
      } finally {
        await db.drop();
      }
    },
  };
}

export interface SpawnedBrain {
  url: string;
  token: string;
  db: TestDatabase;
  server: ServerProcess;
  close(): Promise<void>;
}

/** A Brain server as its own process (`node server/dist/main.js`) on a fresh database. */
export async function spawnBrain(options: { env?: Record<string, string> } = {}): Promise<SpawnedBrain> {
  const db = await createTestDatabase({ max: 10 });
  const server = await spawnServer({ databaseUrl: db.url, env: { BRAIN_LOG_LEVEL: "warn", ...options.env } });
  return {
    url: server.url,
    token: server.token,
    db,
    server,
    async close() {
      await server.stop();
      try {
        await checkJournalShapes(db.sql);
      } finally {
        await db.drop();
      }
    },
  };
}
