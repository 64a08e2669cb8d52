import type { AddressInfo } from "node:net";
import { BrainError, McpQuerySchema, TOOL_NAME_PATTERN } from "@aexhq/brain-contracts";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { httpRefusal, rpcErrorBody } from "../mcp/errors.js";
import { mcpServerFor } from "../mcp/server.js";
import { ownerOf } from "../plugins/auth.js";
import { observeRequestError } from "../plugins/errors.js";
import { originAllowed, ownOrigins } from "../plugins/origin.js";
import { parseInput } from "../plugins/validate.js";
import { SessionParamsSchema } from "./params.js";

/** The requests Brain answers, each checked against the SDK's own schema before it is handled. */
const REQUESTS: Record<string, z.ZodType> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "tasks/get": GetTaskRequestSchema,
  "tasks/result": GetTaskPayloadRequestSchema,
  "tasks/list": ListTasksRequestSchema,
  "tasks/cancel": CancelTaskRequestSchema,
};

function toolSet(value: string | undefined): ReadonlySet<string> | null {
  if (value === undefined) return null;
  return new Set(value.split(",").filter((name) => TOOL_NAME_PATTERN.test(name)));
}

/**
 * Refuses what the SDK would answer badly: a batch (MCP 2025-06-18 and later have none), a body
 * that is not one JSON-RPC message (-32600), and a known request whose params fail its schema
 * (-32602 rather than the SDK's -32603). Null when the message may go on.
 */
function refuse(body: unknown): { status: number; body: unknown } | null {
  if (Array.isArray(body)) {
    return {
      status: 400,
      body: rpcErrorBody(ErrorCode.InvalidRequest, "JSON-RPC batches are not supported.", "invalid_request"),
    };
  }
  const message = JSONRPCMessageSchema.safeParse(body);
  if (!message.success) {
    return {
      status: 400,
      body: rpcErrorBody(ErrorCode.InvalidRequest, "Not a JSON-RPC 2.0 message.", "invalid_request"),
    };
  }
  const m = message.data as { id?: string | number; method?: string };
  const schema = m.id !== undefined && m.method !== undefined ? REQUESTS[m.method] : undefined;
  if (!schema || schema.safeParse(body).success) return null;
  const text = `Invalid params for ${m.method}.`;
  return { status: 200, body: rpcErrorBody(ErrorCode.InvalidParams, text, "invalid_request", m.id ?? null) };
}

/** The web Request the SDK's transport reads (its body is passed parsed, never read again). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(", "));
  }
  return new Request(new URL(request.url, "http://brain.invalid"), { method: request.method, headers });
}

/**
 * Brain as an MCP server (Streamable HTTP, stateless): `POST /v1/sessions/:id/mcp` takes one
 * JSON-RPC message and answers it as JSON. Each request gets its own SDK server and transport,
 * bound to the session and the caller's principal; nothing is kept between requests, so after a
 * fail-over any server answers. There is no SSE stream to open and no MCP session to end: GET and
 * DELETE answer 405.
 */
export async function mcpRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  // Every refusal on these routes, authentication and access included, is a JSON-RPC error body.
  app.setErrorHandler((error, request, reply) => {
    observeRequestError(rt.availability, request, error);
    const refusal = httpRefusal(error);
    if (refusal.body.error.data.code === "internal_error") request.log.error({ err: error }, "mcp request failed");
    void reply.status(refusal.status).send(refusal.body);
  });

  // The Streamable HTTP transport requires servers to check Origin: a page Brain did not serve
  // (a DNS rebinding attack, say) is refused before anything else.
  app.addHook("onRequest", async (request) => {
    const addresses = request.server.addresses().filter((a): a is AddressInfo => typeof a === "object");
    const origin = request.headers.origin;
    if (!originAllowed(origin, ownOrigins(rt.config.publicUrl, addresses))) {
      throw new BrainError("forbidden", `The Origin ${JSON.stringify(origin)} is not one of this server's own.`);
    }
  });

  app.post("/v1/sessions/:id/mcp", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const query = parseInput(McpQuerySchema, request.query);
    const refused = refuse(request.body);
    if (refused) return reply.status(refused.status).send(refused.body);
    const scope = { sessionId: id, tokenId: ownerOf(request.principal), tools: toolSet(query.tools) };
    const mcp = mcpServerFor(rt, scope);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcp.connect(transport);
    // The server lives as long as its request: closing it aborts a handler still waiting (a plain
    // call or tasks/result whose client left); the call itself goes on.
    let closed!: () => void;
    const gone = new Promise<null>((resolve) => {
      closed = () => resolve(null);
    });
    const release = rt.streams.add(ownerOf(request.principal), () => reply.raw.destroy());
    reply.raw.once("close", () => {
      release();
      closed();
      void mcp.close();
    });
    const response = await Promise.race([
      transport.handleRequest(webRequest(request), { parsedBody: request.body }),
      gone,
    ]);
    if (response === null) return reply;
    return reply.send(response);
  });

  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .status(405)
      .header("allow", "POST")
      // -32000: an implementation-defined server error, as the SDK's transport answers a 405.
      .send(rpcErrorBody(-32000, "This MCP endpoint is stateless: POST only.", "invalid_request"));
  app.get("/v1/sessions/:id/mcp", notAllowed);
  app.delete("/v1/sessions/:id/mcp", notAllowed);
}
