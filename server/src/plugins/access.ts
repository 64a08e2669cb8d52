import { BrainError } from "@aexhq/brain-contracts";
import { sessionTokenId } from "@aexhq/brain-db/ops";
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from "fastify";
import { z } from "zod";

/**
 * Who may use a route of the authenticated API, besides the operator (who may use all):
 * - "operator": nobody else (`forbidden`);
 * - "any": any application token; the handler scopes what it reads and records the owner;
 * - "session": an application token that owns the session named by `:id`; any other session,
 *   existing or not, is `not_found`, so its existence is not revealed.
 */
export type Access = "operator" | "any" | "session";

/**
 * Every route of the authenticated API, by method and path. A route missing here fails the
 * server's start (see accessControl), so no route can be added without deciding who may use it.
 * HEAD routes Fastify derives from GET routes take the GET's entry.
 */
export const ROUTE_ACCESS: Readonly<Record<string, Access>> = {
  "POST /v1/tokens": "operator",
  "GET /v1/tokens": "operator",
  "PATCH /v1/tokens/:id": "operator",
  "DELETE /v1/tokens/:id": "operator",
  "POST /v1/hosts": "any",
  // Scoped by the handler: a replica joins the named host of the caller's own namespace.
  "POST /v1/named-hosts/:name/replicas": "any",
  "POST /v1/sessions": "any",
  "GET /v1/sessions": "any",
  "GET /v1/sessions/:id": "session",
  "GET /v1/sessions/:id/tools": "session",
  "POST /v1/sessions/:id/end": "session",
  // A fork belongs to the source's owner (its token), as the source does.
  "POST /v1/sessions/:id/fork": "session",
  "DELETE /v1/sessions/:id": "session",
  "POST /v1/sessions/:id/messages": "session",
  "GET /v1/sessions/:id/events": "session",
  // The AI SDK's chat protocol over a session (useChat): its messages and its turn's stream.
  "POST /v1/sessions/:id/chat": "session",
  "GET /v1/sessions/:id/chat/stream": "session",
  "POST /v1/sessions/:id/cancel": "session",
  "POST /v1/sessions/:id/calls/:seq/cancel": "session",
  // Approval gates: the session's owner (its application token) or the operator decides.
  "GET /v1/sessions/:id/approvals": "session",
  "POST /v1/sessions/:id/calls/:seq/approve": "session",
  "POST /v1/sessions/:id/calls/:seq/deny": "session",
  // Brain as an MCP server; tasks are further scoped to the principal that created them.
  "POST /v1/sessions/:id/mcp": "session",
  "GET /v1/sessions/:id/mcp": "session",
  "DELETE /v1/sessions/:id/mcp": "session",
  // Content-addressed: the digest names the bytes, so a caller that can name a component could
  // upload it too. Shared by every caller; nothing in it belongs to one application.
  "HEAD /v1/components/:sha256": "any",
  "PUT /v1/components/:sha256": "any",
  // Prometheus metrics, with BRAIN_METRICS=token (the default): they name every session's tools.
  "GET /metrics": "operator",
  // The journal console reads every application's sessions, calls and hosts.
  "GET /v1/console/sessions": "operator",
  "GET /v1/console/calls": "operator",
  "GET /v1/console/hosts": "operator",
  "GET /v1/console/processes": "operator",
};

export function accessOf(method: string, url: string): Access | undefined {
  return ROUTE_ACCESS[`${method} ${url}`] ?? (method === "HEAD" ? ROUTE_ACCESS[`GET ${url}`] : undefined);
}

const SessionIdSchema = z.uuid();

/**
 * Registers, on an encapsulated scope whose onRequest hook sets request.principal, the access
 * check of each route added after it: a route-level onRequest hook, so a refused request's body is
 * never read. Throws at registration for a route ROUTE_ACCESS does not list.
 */
export function accessControl(api: FastifyInstance): void {
  api.addHook("onRoute", (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const kinds = new Set(methods.map((m) => accessOf(m, route.url)));
    const access = kinds.size === 1 ? [...kinds][0] : undefined;
    if (access === undefined) {
      throw new Error(`${methods.join(",")} ${route.url} has no entry in ROUTE_ACCESS: decide who may use it`);
    }
    const check = checkFor(access, api);
    const own = route.onRequest;
    route.onRequest = own === undefined ? [check] : [check, ...(Array.isArray(own) ? own : [own])];
  });
}

function checkFor(access: Access, api: FastifyInstance): onRequestHookHandler {
  switch (access) {
    case "any":
      return async () => {};
    case "operator":
      return async (request: FastifyRequest) => {
        if (request.principal.kind !== "operator") throw new BrainError("forbidden");
      };
    case "session":
      return async (request: FastifyRequest) => {
        const principal = request.principal;
        if (principal.kind === "operator") return;
        const parsed = SessionIdSchema.safeParse((request.params as { id?: unknown }).id);
        if (!parsed.success) throw new BrainError("invalid_request", "The session id is not a UUID.");
        // Ownership never changes after creation and ids are never reused: checking first is safe.
        if ((await sessionTokenId(api.brain.sql, parsed.data)) !== principal.tokenId) {
          throw new BrainError("not_found");
        }
      };
  }
}
