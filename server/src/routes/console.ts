import { ConsoleCallsQuerySchema, ConsoleListQuerySchema, ConsoleSessionsQuerySchema } from "@aexhq/brain-contracts";
import { consoleCalls, consoleHosts, consoleProcesses, consoleSessions } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { parseInput } from "../plugins/validate.js";

/**
 * The journal console's read routes: every application's sessions, calls, hosts and Brain's own
 * processes, so the operator's alone (ROUTE_ACCESS). Read-only, from BRAIN_READ_URL's replica when
 * set (what it shows may lag); a session's timeline is its event stream
 * (GET /v1/sessions/:id/events), which needs nothing more.
 */
export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;

  app.get("/v1/console/sessions", async (request) => ({
    sessions: await consoleSessions(rt.readSql, parseInput(ConsoleSessionsQuerySchema, request.query)),
  }));

  app.get("/v1/console/calls", async (request) => ({
    calls: await consoleCalls(rt.readSql, parseInput(ConsoleCallsQuerySchema, request.query)),
  }));

  app.get("/v1/console/hosts", async (request) => ({
    hosts: await consoleHosts(rt.readSql, parseInput(ConsoleListQuerySchema, request.query).limit),
  }));

  app.get("/v1/console/processes", async (request) => ({
    processes: await consoleProcesses(rt.readSql, parseInput(ConsoleListQuerySchema, request.query).limit),
  }));
}
