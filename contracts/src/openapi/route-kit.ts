import { z } from "zod";
import type { ErrorCode } from "../errors.js";

/**
 * How one route is described in HTTP_ROUTES (routes.ts), keyed like ROUTE_ACCESS: `METHOD
 * /path/:param`. HEAD routes Fastify derives from GET routes take the GET's entry; an explicit
 * HEAD route has its own. The shared parameter schemas and error lists below keep the entries short.
 */
export interface RouteDescription {
  summary: string;
  description?: string;
  /**
   * The credential it takes: none; any bearer token of the API (the operator's or an
   * application's); the operator token only; a host's, a replica's or a call's own token.
   */
  auth: "none" | "token" | "operator" | "host" | "replica" | "call";
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** A JSON body, or another media type with its schema. */
  body?: z.ZodType | { contentType: string; schema: z.ZodType };
  /** Accepts an `Idempotency-Key` header. */
  idempotencyKey?: boolean;
  /** Success answers by status; a schema-less one has no body. */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /**
   * The error codes it can answer, each at its status in ERROR_CODES unless given as
   * `[code, status]` (a provider's outcome code relayed as 502, say).
   */
  errors: readonly (ErrorCode | readonly [ErrorCode, number])[];
  /** A WebSocket upgrade: the frames each side sends once it is open. */
  websocket?: { client: z.ZodType; server: z.ZodType };
  /**
   * The shape of its error answers: Brain's `{ error: { code, message } }`, or (the MCP endpoint)
   * a JSON-RPC error whose `error.data.code` is Brain's code.
   */
  errorBody?: "brain" | "jsonrpc";
}

export const Uuid = z.uuid();

export const SessionParams = z.strictObject({ id: Uuid });
export const CallParams = z.strictObject({ sessionId: Uuid, sequence: z.coerce.number().int().positive() });
export const Sha256Params = z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/) });

/** Every route can fail unexpectedly; such a failure is logged and answered with this code. */
export const ALWAYS = ["internal_error"] as const;
/**
 * Routes under /v1 fail fast while the database is away, and on a connection lost mid-request; a
 * transaction that lost a deadlock or a serialization conflict was rolled back.
 */
export const V1 = ["database_unavailable", "write_conflict", ...ALWAYS] as const;
/** The authenticated API: a bearer token, then the route's access rule. */
export const API = ["unauthorized", ...V1] as const;
/** Operator-only routes refuse application tokens. */
export const OPERATOR = [...API, "forbidden"] as const;
/** Routes on one session: a malformed id is invalid_request; another application's session, not_found. */
export const SESSION = [...API, "invalid_request", "not_found"] as const;
/** A JSON body: validated, limited in size, JSON only. */
export const BODY = ["invalid_request", "body_too_large", "unsupported_media_type"] as const;
/** A write through the journal writer whose COMMIT's fate the database never told. */
export const WRITE = ["commit_unknown"] as const;
/** Provider failures of a granted model call, relayed as a bad gateway. */
export const PROVIDER = (
  [
    "model_error",
    "model_auth_failed",
    "model_rate_limited",
    "model_bad_request",
    "model_unavailable",
    "model_timeout",
  ] as const
).map((code) => [code, 502] as const);
