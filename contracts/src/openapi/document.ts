import { z } from "zod";
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from "zod-openapi";
import { ERROR_CODES, type ErrorCode } from "../errors.js";
import { HTTP_ROUTES, type RouteDescription } from "./routes.js";

/** `/v1/sessions/:id` → `/v1/sessions/{id}` */
export function openApiPath(route: string): string {
  return route.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

/** A route's error codes grouped by the status they are answered with. */
export function errorsByStatus(route: RouteDescription): Map<number, ErrorCode[]> {
  const out = new Map<number, ErrorCode[]>();
  for (const e of route.errors) {
    const [code, status] = typeof e === "string" ? [e, ERROR_CODES[e].http] : e;
    const list = out.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    out.set(status, list);
  }
  return out;
}

/**
 * The error body of one status of one route: `code` is one of the codes listed for it (for the MCP
 * endpoint, a JSON-RPC error carrying it as `error.data.code`).
 */
function errorBody(codes: ErrorCode[], shape: RouteDescription["errorBody"]): z.ZodType {
  const code = z.enum(codes as [ErrorCode, ...ErrorCode[]]);
  if (shape === "jsonrpc") {
    return z.object({
      jsonrpc: z.literal("2.0"),
      id: z.union([z.string(), z.number().int()]).nullable(),
      error: z.object({ code: z.number().int(), message: z.string(), data: z.object({ code }) }),
    });
  }
  return z.object({
    error: z.object({
      code,
      message: z.string(),
      details: z.unknown().optional(),
    }),
  });
}

const SECURITY: Record<RouteDescription["auth"], Record<string, string[]>[] | undefined> = {
  none: [],
  token: [{ bearer: [] }],
  operator: [{ operator: [] }],
  host: [{ hostToken: [] }],
  replica: [{ replicaToken: [] }],
  call: [{ callToken: [] }, { callTokenHeader: [] }],
};

function operation(key: string, route: RouteDescription): ZodOpenApiOperationObject {
  const responses: ZodOpenApiOperationObject["responses"] = {};
  for (const [status, r] of Object.entries(route.responses)) {
    responses[status as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: r.description,
      ...(r.schema ? { content: { [r.contentType ?? "application/json"]: { schema: r.schema } } } : {}),
    };
  }
  for (const [status, codes] of errorsByStatus(route)) {
    responses[`${status}` as `${4 | 5}${string}`] = {
      description: `Error: ${codes.join(", ")}.`,
      content: { "application/json": { schema: errorBody(codes, route.errorBody) } },
    };
  }
  const op: ZodOpenApiOperationObject = {
    operationId: key.replace(/[^A-Za-z0-9]+/g, "_").replace(/_$/, ""),
    summary: route.summary,
    responses,
  };
  if (route.description) op.description = route.description;
  const security = SECURITY[route.auth];
  if (security) op.security = security;
  const params: NonNullable<ZodOpenApiOperationObject["requestParams"]> = {};
  if (route.params) params.path = route.params;
  if (route.query) params.query = route.query;
  if (route.idempotencyKey) params.header = z.object({ "idempotency-key": z.string().min(1).max(256).optional() });
  if (Object.keys(params).length > 0) op.requestParams = params;
  if (route.body) {
    const [contentType, schema] =
      route.body instanceof z.ZodType ? ["application/json", route.body] : [route.body.contentType, route.body.schema];
    op.requestBody = { required: true, content: { [contentType]: { schema } } };
  }
  if (route.websocket) {
    // OpenAPI has no WebSocket objects: the upgrade is described as such, with the frames each
    // side sends as extension schemas (JSON text frames, one message each).
    op["x-websocket"] = {
      description: "After the upgrade, each side sends JSON text frames, one message each.",
      client: frameSchema(route.websocket.client, "input"),
      server: frameSchema(route.websocket.server, "output"),
    };
  }
  return op;
}

/** A frame union as JSON Schema, without its own `$schema` (it is embedded in the document). */
function frameSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

let built: ReturnType<typeof createDocument> | undefined;

/** The OpenAPI 3.1 document of every route in HTTP_ROUTES (built once). */
export function openApiDocument(): ReturnType<typeof createDocument> {
  if (built) return built;
  const paths: ZodOpenApiPathsObject = {};
  for (const [key, route] of Object.entries(HTTP_ROUTES)) {
    const [method, path] = key.split(" ") as [string, string];
    const item = paths[openApiPath(path)] ?? {};
    (item as Record<string, ZodOpenApiOperationObject>)[method.toLowerCase()] = operation(key, route);
    paths[openApiPath(path)] = item;
  }
  built = createDocument(
    {
      openapi: "3.1.0",
      info: {
        title: "Brain on Postgres",
        version: "0.1.0",
        description:
          "A durable runtime for the tools of AI-agent sessions. Errors are `{ error: { code, message, details? } }` with the stable codes of docs/errors.md; each operation lists the codes it can answer.",
      },
      paths,
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "The operator token or an application token." },
          operator: { type: "http", scheme: "bearer", description: "The operator token (BRAIN_API_TOKEN)." },
          hostToken: { type: "http", scheme: "bearer", description: "The host token from POST /v1/hosts." },
          replicaToken: {
            type: "http",
            scheme: "bearer",
            description: "The replica token from POST /v1/named-hosts/:name/replicas.",
          },
          callToken: { type: "http", scheme: "bearer", description: "The call's callback token." },
          callTokenHeader: { type: "apiKey", in: "header", name: "brain-call-token" },
        },
      },
    },
    { allowEmptySchema: { custom: true, transform: true, pipe: true } },
  );
  return built;
}

/** The document as checked in (contracts/openapi.json). */
export function renderOpenApi(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
