import { z } from "zod";
import { ChatRequestSchema } from "../chat.js";
import { HostFrameSchema, ServerFrameSchema } from "../frames.js";
import {
  ApprovalDecisionSchema,
  ApproveCallBodySchema,
  CallFrameBodySchema,
  CallFrameResultSchema,
  CancelCallResultSchema,
  CancelTurnResultSchema,
  ComponentUploadResultSchema,
  CreateSessionBodySchema,
  DenyCallBodySchema,
  EventsQuerySchema,
  ForkSessionBodySchema,
  JournalEventSchema,
  ListSessionsQuerySchema,
  PendingApprovalListSchema,
  PostMessageBodySchema,
  PostMessageResultSchema,
  RegisteredHostSchema,
  RegisteredReplicaSchema,
  RegisterHostBodySchema,
  ServeHostBodySchema,
  SessionListSchema,
  SessionSchema,
  SessionToolsSchema,
} from "../http.js";
import { BrainKeysSchema } from "../invocation-signature.js";
import { ModelRequestSchema, ModelResultSchema } from "../model.js";
import {
  AppTokenListSchema,
  AppTokenSchema,
  CreatedTokenSchema,
  CreateTokenBodySchema,
  UpdateTokenBodySchema,
} from "../tokens.js";
import { CONSOLE_ROUTES } from "./console-routes.js";
import { MCP_ROUTES } from "./mcp-routes.js";
import {
  ALWAYS,
  API,
  BODY,
  CallParams,
  OPERATOR,
  PROVIDER,
  type RouteDescription,
  SESSION,
  SessionParams,
  Sha256Params,
  Uuid,
  V1,
  WRITE,
} from "./route-kit.js";

export type { RouteDescription } from "./route-kit.js";

export const HealthSchema = z.object({ status: z.literal("ok"), serverId: Uuid });
export const ReadinessSchema = z.object({
  status: z.enum(["ready", "unavailable"]),
  serverId: Uuid,
  database: z.boolean(),
  listening: z.boolean(),
  /** A write committed within the last 10 s. */
  committing: z.boolean(),
  migrations: z.boolean(),
  schemaVersion: z.object({ expected: z.number().int().nullable(), applied: z.number().int().nullable() }),
});
/** The OpenAPI document itself, as far as a client needs to know it. */
export const OpenApiDocumentSchema = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({}),
  paths: z.record(z.string(), z.unknown()),
});

/**
 * The contracts' schemas under the names the document gives them (components/schemas); `.meta()`
 * makes a copy, so the schemas the server validates with are untouched.
 */
const AppToken = AppTokenSchema.meta({ id: "AppToken" });
const AppTokenList = AppTokenListSchema.meta({ id: "AppTokenList" });
const CallFrameBody = CallFrameBodySchema.meta({ id: "CallFrameBody" });
const CallFrameResult = CallFrameResultSchema.meta({ id: "CallFrameResult" });
const CancelCallResult = CancelCallResultSchema.meta({ id: "CancelCallResult" });
const CancelTurnResult = CancelTurnResultSchema.meta({ id: "CancelTurnResult" });
const ComponentUploadResult = ComponentUploadResultSchema.meta({ id: "ComponentUploadResult" });
const CreateSessionBody = CreateSessionBodySchema.meta({ id: "CreateSessionBody" });
const CreateTokenBody = CreateTokenBodySchema.meta({ id: "CreateTokenBody" });
const UpdateTokenBody = UpdateTokenBodySchema.meta({ id: "UpdateTokenBody" });
const CreatedToken = CreatedTokenSchema.meta({ id: "CreatedToken" });
const JournalEvent = JournalEventSchema.meta({ id: "JournalEvent" });
const ForkSessionBody = ForkSessionBodySchema.meta({ id: "ForkSessionBody" });
const PendingApprovalList = PendingApprovalListSchema.meta({ id: "PendingApprovalList" });
const ApprovalDecision = ApprovalDecisionSchema.meta({ id: "ApprovalDecision" });
const ChatRequest = ChatRequestSchema.meta({ id: "ChatRequest" });
const ModelRequest = ModelRequestSchema.meta({ id: "ModelRequest" });
const ModelResult = ModelResultSchema.meta({ id: "ModelResult" });
const PostMessageBody = PostMessageBodySchema.meta({ id: "PostMessageBody" });
const PostMessageResult = PostMessageResultSchema.meta({ id: "PostMessageResult" });
const RegisterHostBody = RegisterHostBodySchema.meta({ id: "RegisterHostBody" });
const RegisteredHost = RegisteredHostSchema.meta({ id: "RegisteredHost" });
const RegisteredReplica = RegisteredReplicaSchema.meta({ id: "RegisteredReplica" });
const ServeHostBody = ServeHostBodySchema.meta({ id: "ServeHostBody" });
const Session = SessionSchema.meta({ id: "Session" });
const SessionList = SessionListSchema.meta({ id: "SessionList" });
const SessionTools = SessionToolsSchema.meta({ id: "SessionTools" });

/**
 * Every HTTP route of the server, described once (the console's and the MCP endpoint's in modules
 * of their own): the OpenAPI document is generated from this table, and a test checks that it
 * names exactly the routes the server registers.
 */
export const HTTP_ROUTES: Readonly<Record<string, RouteDescription>> = {
  ...CONSOLE_ROUTES,
  ...MCP_ROUTES,
  "GET /healthz": {
    summary: "Liveness",
    description: "Answers while the process runs; touches nothing.",
    auth: "none",
    responses: { 200: { description: "The process runs.", schema: HealthSchema } },
    errors: ALWAYS,
  },
  "GET /readyz": {
    summary: "Readiness",
    description:
      "200 only while the database answers, the LISTEN connection is in place and the migrations are current; else 503 with the same body saying why.",
    auth: "none",
    responses: {
      200: { description: "Ready.", schema: ReadinessSchema },
      503: { description: "Not ready (status unavailable).", schema: ReadinessSchema },
    },
    errors: ALWAYS,
  },
  "GET /v1/keys": {
    summary: "Brain's invocation signing keys",
    description:
      "The Ed25519 public keys (a JWK Set) that verify the brain-signature header of the invocations Brain POSTs to applications' tool handlers. Public.",
    auth: "none",
    responses: { 200: { description: "The keys.", schema: BrainKeysSchema } },
    errors: V1,
  },
  "GET /openapi.json": {
    summary: "This API description",
    description: "The OpenAPI 3.1 document of every route, generated from the zod contracts. Public.",
    auth: "none",
    responses: { 200: { description: "The document.", schema: OpenApiDocumentSchema } },
    errors: ALWAYS,
  },
  "GET /metrics": {
    summary: "Prometheus metrics",
    description:
      "The Prometheus text exposition of this server's metrics. With BRAIN_METRICS=token (the default) the operator token only; with open, no token; with off, absent.",
    auth: "operator",
    responses: { 200: { description: "Text exposition format 0.0.4.", schema: z.string(), contentType: "text/plain" } },
    errors: OPERATOR,
  },
  "POST /v1/tokens": {
    summary: "Create an application token",
    description: "The token is shown once; Brain keeps only its SHA-256.",
    auth: "operator",
    body: CreateTokenBody,
    responses: { 201: { description: "Created.", schema: CreatedToken } },
    errors: [...OPERATOR, ...BODY],
  },
  "GET /v1/tokens": {
    summary: "List application tokens",
    description: "Newest first, revoked ones included, never a token.",
    auth: "operator",
    responses: { 200: { description: "The tokens.", schema: AppTokenList } },
    errors: OPERATOR,
  },
  "PATCH /v1/tokens/:id": {
    summary: "Change an application token's quotas",
    description:
      "Sets the named quotas (null: back to the server's default); what the token holds already stays, new work is checked.",
    auth: "operator",
    params: z.strictObject({ id: Uuid }),
    body: UpdateTokenBody,
    responses: { 200: { description: "The token.", schema: AppToken } },
    errors: [...OPERATOR, ...BODY, "not_found"],
  },
  "DELETE /v1/tokens/:id": {
    summary: "Revoke an application token",
    description: "Idempotent; the row stays.",
    auth: "operator",
    params: z.strictObject({ id: Uuid }),
    responses: { 200: { description: "Revoked.", schema: AppToken } },
    errors: [...OPERATOR, "invalid_request", "not_found"],
  },
  "POST /v1/hosts": {
    summary: "Register an application host",
    description: "Owned by the caller's token; the host token is shown once.",
    auth: "token",
    body: RegisterHostBody,
    responses: { 201: { description: "Registered.", schema: RegisteredHost } },
    errors: [...API, ...BODY],
  },
  "GET /v1/hosts/:id/connect": {
    summary: "A host's WebSocket",
    description:
      "Upgrades to a WebSocket with the host token as bearer. `?sessions=attached`: the host names the sessions it serves with attach frames and is sent only their calls.",
    auth: "host",
    params: z.strictObject({ id: Uuid }),
    query: z.object({ sessions: z.enum(["attached", "all"]).optional() }),
    responses: { 101: { description: "Switching Protocols: the socket is open." } },
    errors: [...V1, "unauthorized", "invalid_request"],
    websocket: { client: HostFrameSchema, server: ServerFrameSchema },
  },
  "POST /v1/named-hosts/:name/replicas": {
    summary: "Register a replica of a named host",
    description: "In the caller's namespace; the replica token is shown once.",
    auth: "token",
    params: z.strictObject({ name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/) }),
    body: ServeHostBody,
    responses: { 201: { description: "Registered.", schema: RegisteredReplica } },
    errors: [...API, ...BODY, "invalid_placement", "duplicate_tool"],
  },
  "GET /v1/replicas/:id/connect": {
    summary: "A named host replica's WebSocket",
    description:
      "Upgrades to a WebSocket with the replica token as bearer; refused with tool_mismatch when its tools differ from what the host's active sessions advertise.",
    auth: "replica",
    params: z.strictObject({ id: Uuid }),
    responses: { 101: { description: "Switching Protocols: the socket is open." } },
    errors: [...V1, "unauthorized", "invalid_request", "tool_mismatch"],
    websocket: { client: HostFrameSchema, server: ServerFrameSchema },
  },
  "POST /v1/sessions": {
    summary: "Create a session",
    description: "Secrets in it are sealed, never echoed. Idempotency-Key: the same key and body give the same answer.",
    auth: "token",
    body: CreateSessionBody,
    idempotencyKey: true,
    responses: { 201: { description: "Created.", schema: Session } },
    errors: [
      ...API,
      ...BODY,
      ...WRITE,
      "idempotency_conflict",
      "not_found",
      "duplicate_tool",
      "duplicate_environment",
      "host_required",
      "component_not_found",
      "grant_denied",
      "invalid_placement",
    ],
  },
  "GET /v1/sessions": {
    summary: "List sessions",
    description: "Newest first; an application token lists only its own.",
    auth: "token",
    query: ListSessionsQuerySchema,
    responses: { 200: { description: "A page of sessions.", schema: SessionList } },
    errors: [...API, "invalid_request"],
  },
  "GET /v1/sessions/:id": {
    summary: "Get a session",
    auth: "token",
    params: SessionParams,
    responses: { 200: { description: "The session.", schema: Session } },
    errors: SESSION,
  },
  "GET /v1/sessions/:id/tools": {
    summary: "A session's tools as advertised at creation",
    auth: "token",
    params: SessionParams,
    responses: { 200: { description: "Its placements.", schema: SessionTools } },
    errors: SESSION,
  },
  "POST /v1/sessions/:id/end": {
    summary: "End a session",
    description: "Open calls end cancelled and hosts are told.",
    auth: "token",
    params: SessionParams,
    responses: { 200: { description: "The ended session.", schema: Session } },
    errors: [...SESSION, ...WRITE],
  },
  "DELETE /v1/sessions/:id": {
    summary: "Delete a session and its journal",
    auth: "token",
    params: SessionParams,
    responses: { 204: { description: "Deleted." } },
    errors: [...SESSION, ...WRITE],
  },
  "POST /v1/sessions/:id/messages": {
    summary: "Send a user message",
    description:
      "Starts (or queues) a turn. With wait: true the answer holds the activation once it ends. Idempotency-Key: same key and body, same answer.",
    auth: "token",
    params: SessionParams,
    body: PostMessageBody,
    idempotencyKey: true,
    responses: { 201: { description: "Journaled.", schema: PostMessageResult } },
    errors: [...SESSION, ...BODY, ...WRITE, "idempotency_conflict", "session_ended", "not_ready"],
  },
  "GET /v1/sessions/:id/events": {
    summary: "The journal as an NDJSON stream",
    description:
      "Records after `after`, without gaps or duplicates, one JSON object per line; with follow it stays open until the session ends. With live (and follow), model calls' text as the provider streams it comes between the records as `model_text_delta` lines marked `live: true`: not journaled, each call's text once by offset, none after its model_call_ended.",
    auth: "token",
    params: SessionParams,
    query: EventsQuerySchema,
    responses: {
      200: {
        description: "One journal record per line.",
        schema: JournalEvent,
        contentType: "application/x-ndjson",
      },
    },
    errors: SESSION,
  },
  "POST /v1/sessions/:id/chat": {
    summary: "A chat message, answered as a UI message stream",
    description:
      "The AI SDK's chat protocol (useChat, DefaultChatTransport): journals the last message (a user's text parts) as the session's next message, once per UI message id, and answers its turn in the UI message stream protocol (SSE, `x-vercel-ai-ui-message-stream: v1`): live text, tool inputs and outputs, then finish, error or abort and [DONE].",
    auth: "token",
    params: SessionParams,
    body: ChatRequest,
    responses: {
      200: { description: "The turn, as a UI message stream.", contentType: "text/event-stream" },
    },
    errors: [...SESSION, ...BODY, ...WRITE, "session_ended", "idempotency_conflict"],
  },
  "GET /v1/sessions/:id/chat/stream": {
    summary: "The running turn again, as a UI message stream",
    description:
      "What useChat({ resume: true }) asks after a reload: the turn still running (the first unanswered message's) from its start, rendered from the journal and the live text any server hears; 204 when every message is answered.",
    auth: "token",
    params: SessionParams,
    responses: {
      200: { description: "The turn, as a UI message stream.", contentType: "text/event-stream" },
      204: { description: "No turn is running." },
    },
    errors: SESSION,
  },
  "POST /v1/sessions/:id/cancel": {
    summary: "Cancel the running turn",
    description: "Journals cancel_requested; the Agentloop ends the turn's open calls and the activation.",
    auth: "token",
    params: SessionParams,
    responses: { 200: { description: "The cancel_requested record.", schema: CancelTurnResult } },
    errors: [...SESSION, ...WRITE, "session_ended"],
  },
  "POST /v1/sessions/:id/calls/:seq/cancel": {
    summary: "Cancel one tool call",
    description: "cancelled is false when the call had already ended.",
    auth: "token",
    params: z.strictObject({ id: Uuid, seq: z.coerce.number().int().positive() }),
    responses: { 200: { description: "Whether it was cancelled.", schema: CancelCallResult } },
    errors: [...SESSION, ...WRITE, "call_not_found"],
  },
  "POST /v1/sessions/:id/fork": {
    summary: "Fork a session at a sequence",
    description:
      "A new session whose journal is this one's up to `at` (what was open there is closed in the fork's journal: tool calls cancelled with cause forked, a model call unknown, the activation cancelled), with the same tools and host; `model` replaces the model. Its session_created and forkedFrom name the source and sequence.",
    auth: "token",
    params: SessionParams,
    body: ForkSessionBody,
    responses: { 201: { description: "The fork.", schema: Session } },
    errors: [...SESSION, ...BODY, ...WRITE],
  },
  "GET /v1/sessions/:id/approvals": {
    summary: "Calls waiting for approval",
    description:
      'The session\'s calls at an approval gate (tools placed with approval: "always"), in call order, with the input the model asked for and its SHA-256.',
    auth: "token",
    params: SessionParams,
    responses: { 200: { description: "The waiting calls.", schema: PendingApprovalList } },
    errors: SESSION,
  },
  "POST /v1/sessions/:id/calls/:seq/approve": {
    summary: "Approve a waiting call",
    description:
      "Journals approval_decided and dispatches the call, as asked or with edited input (checked against the tool's input schema, journaled beside the original).",
    auth: "token",
    params: z.strictObject({ id: Uuid, seq: z.coerce.number().int().positive() }),
    body: ApproveCallBodySchema,
    responses: { 200: { description: "The decision's record.", schema: ApprovalDecision } },
    errors: [...SESSION, ...BODY, ...WRITE, "call_not_waiting"],
  },
  "POST /v1/sessions/:id/calls/:seq/deny": {
    summary: "Deny a waiting call",
    description: "Journals approval_decided and ends the call with a `denied` error outcome the model reads.",
    auth: "token",
    params: z.strictObject({ id: Uuid, seq: z.coerce.number().int().positive() }),
    body: DenyCallBodySchema,
    responses: { 200: { description: "The decision's record.", schema: ApprovalDecision } },
    errors: [...SESSION, ...BODY, ...WRITE, "call_not_waiting"],
  },
  "HEAD /v1/components/:sha256": {
    summary: "Whether a component is stored",
    auth: "token",
    params: Sha256Params,
    responses: { 200: { description: "Stored." } },
    errors: [...API, "invalid_request", "not_found"],
  },
  "PUT /v1/components/:sha256": {
    summary: "Upload a WebAssembly component",
    description: "≤ 64 MiB; admitted (digest, component layer, exports brain:tool run) before it is stored.",
    auth: "token",
    params: Sha256Params,
    body: { contentType: "application/wasm", schema: z.string().meta({ format: "binary" }) },
    responses: { 201: { description: "Stored.", schema: ComponentUploadResult } },
    errors: [...API, ...BODY, "invalid_component"],
  },
  "POST /v1/calls/:sessionId/:sequence/frames": {
    summary: "A callback of a tool served over HTTP",
    description:
      "Authorised by the call's callback token. Answers once the frame has committed (the durable acknowledgment).",
    auth: "call",
    params: CallParams,
    body: CallFrameBody,
    responses: { 200: { description: "Committed.", schema: CallFrameResult } },
    errors: [...V1, ...BODY, ...WRITE, "unauthorized", "call_ended", "budget_exceeded", "unstorable_text"],
  },
  "POST /v1/calls/:sessionId/:sequence/model": {
    summary: "The granted model execution service of an HTTP Environment",
    description:
      "Authorised by the call's token (bearer or brain-call-token). A ModelRequest in, the ModelResult out; provider failures answer 502 with their model_* code, a stopped call 409.",
    auth: "call",
    params: CallParams,
    body: ModelRequest,
    responses: { 200: { description: "The model's answer.", schema: ModelResult } },
    errors: [
      ...V1,
      ...BODY,
      ...WRITE,
      "unauthorized",
      "model_not_granted",
      "invalid_model_request",
      "model_budget_exceeded",
      "not_supported",
      "call_ended",
      "call_not_found",
      ["model_call_stopped", 409],
      ...PROVIDER,
    ],
  },
};
