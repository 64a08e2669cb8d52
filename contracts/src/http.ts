import { z } from "zod";
import { CallerDeadlineFields } from "./deadlines.js";
import { TOOL_NAME_PATTERN } from "./journal.js";
import { MAX_MESSAGE_CHARS, MAX_MESSAGE_WAIT_MS, MAX_TOOLS_PER_SESSION } from "./limits.js";
import { ModelConfigSchema } from "./model-config.js";
import { OutcomeSchema } from "./outcome.js";
import { isStorableText } from "./storable.js";
import { HttpUrlSchema } from "./urls.js";

/** Bodies and answers of the HTTP API (`/v1`). Each is the single definition both ends use. */

const JsonSchemaObject = z.record(z.string(), z.json());
const Uuid = z.uuid();
const EnvName = z.string().regex(/^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/);

/** Resources an Environment may grant to the tools bound to it. */
export const GrantsSchema = z.strictObject({
  /** The session's workspace: "read" preopens it read-only; absent means no filesystem at all. */
  workspace: z.enum(["read", "write"]).optional(),
});

/**
 * An application host: the registering application (default name "application") or a named one.
 * With `url`, the application serves its tools over HTTP instead of the host connection:
 * `protocol: "tool"` (default) is the Application tool extension (Brain POSTs the invocation, the
 * handler finishes it through call-scoped callbacks), `"json"` the v1 convention of `http()` /
 * `httpTool()` (Brain POSTs the input; the response body is the result).
 */
export const HostEnvironmentRefSchema = z.strictObject({
  type: z.literal("host"),
  name: EnvName,
  url: HttpUrlSchema.optional(),
  protocol: z.enum(["tool", "json"]).optional(),
});
/** Brain's own runtime: component tools run by workers, with the binding's grants. */
export const BrainEnvironmentRefSchema = z.strictObject({
  type: z.literal("brain"),
  name: EnvName,
  filesystem: GrantsSchema.optional(),
});
/**
 * An HTTP Environment: interprets descriptors (`http_json`) against its configured base URL and
 * headers. Its configuration travels in the session's `environments`, never in a placement.
 */
export const HttpEnvironmentRefSchema = z.strictObject({ type: z.literal("http"), name: EnvName });
/**
 * An MCP Environment: a remote MCP server (Streamable HTTP) whose tools the server placed from its
 * `tools/list` (see McpServerSpecSchema). Its URL travels in each placement's implementation, its
 * headers sealed with the session.
 */
export const McpEnvironmentRefSchema = z.strictObject({ type: z.literal("mcp"), name: EnvName });
/** Where a placed tool runs. */
export const EnvironmentRefSchema = z.discriminatedUnion("type", [
  HostEnvironmentRefSchema,
  BrainEnvironmentRefSchema,
  HttpEnvironmentRefSchema,
  McpEnvironmentRefSchema,
]);

export const HttpMethodSchema = z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]);
/**
 * Headers Brain sets itself: the target's Host, the connection's own (hop-by-hop) and framing
 * headers. A caller's value would redirect a request inside a shared server or break its framing.
 */
export const FORBIDDEN_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "expect",
]);
const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/)
  .refine(
    (name) => !FORBIDDEN_REQUEST_HEADERS.has(name.toLowerCase()),
    "a header Brain does not set for a caller (Host, hop-by-hop and framing headers)",
  );

/**
 * An HTTP Environment's configuration. `headers` are secrets (an Authorization header, say): stored
 * encrypted, never journaled, never returned; reads show only their names. `setup` is one request
 * that must succeed before the first invocation; a failure reaches the ordinary tool error path.
 */
export const HttpEnvironmentConfigSchema = z.strictObject({
  baseUrl: HttpUrlSchema,
  headers: z.record(HeaderName, z.string().max(8192)).optional(),
  setup: z
    .strictObject({ method: HttpMethodSchema, path: z.string().min(1).max(2048), body: z.json().optional() })
    .optional(),
  /**
   * What the Environment may ask of Brain while it runs a call. `model`: each invocation carries
   * `brain-model-url` and `brain-call-token` headers, with which the service behind the base URL
   * calls the session's model for that call (the granted model execution service).
   */
  grants: z.strictObject({ model: z.boolean().optional() }).optional(),
});
export const EnvironmentSpecSchema = HttpEnvironmentConfigSchema.extend({
  type: z.literal("http"),
  name: EnvName,
});
/** A change to an HTTP Environment (ctx.environments.update): given fields replace the old ones. */
export const EnvironmentPatchSchema = HttpEnvironmentConfigSchema.partial();

export const ENVIRONMENT_OPERATIONS = ["list", "get", "create", "update", "setup", "delete", "call"] as const;
export const EnvironmentOperationSchema = z.enum(ENVIRONMENT_OPERATIONS);
/**
 * What environmentControl may allow: the operations, and `grant`, which create and update need to
 * set an Environment's grants (the model execution service is authority, not configuration).
 */
export const ENVIRONMENT_PERMISSIONS = [...ENVIRONMENT_OPERATIONS, "grant"] as const;
/**
 * What the session's tools may do through ctx.environments: the operations (and `grant`), limited
 * to the named environments when `environments` is given. Absent means no environment control.
 */
export const EnvironmentControlSchema = z.strictObject({
  operations: z.array(z.enum(ENVIRONMENT_PERMISSIONS)).max(ENVIRONMENT_PERMISSIONS.length),
  environments: z.array(EnvName).max(256).optional(),
});

/** An Environment as ctx.environments shows it: configuration without header values. */
export const EnvironmentViewSchema = z.object({
  type: z.literal("http"),
  name: EnvName,
  baseUrl: z.string(),
  headerNames: z.array(z.string()),
  setup: z.object({ method: HttpMethodSchema, path: z.string() }).nullable(),
  grants: z.object({ model: z.boolean() }),
  status: z.enum(["new", "ready", "failed"]),
  setupError: z.string().nullable(),
});

export const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);
/** A WebAssembly component exporting brain:tool, uploaded beforehand (PUT /v1/components/:sha256). */
export const ComponentImplementationSchema = z.strictObject({ type: z.literal("component"), sha256: Sha256Schema });

/** An opaque, immutable descriptor its Environment interprets (`implementation: (options) => ...`). */
export const DescriptorImplementationSchema = z.strictObject({ type: z.literal("descriptor"), descriptor: z.json() });
/**
 * A tool of a remote MCP server, as the server placed it from `tools/list`: the server's URL, the
 * tool's name there (the Brain name may differ) and whether it may run as an MCP task.
 */
export const McpImplementationSchema = z.strictObject({
  type: z.literal("mcp"),
  url: HttpUrlSchema,
  tool: z.string().min(1).max(256),
  taskSupport: z.enum(["forbidden", "optional", "required"]),
});
export const ImplementationSchema = z.discriminatedUnion("type", [
  ComponentImplementationSchema,
  DescriptorImplementationSchema,
  McpImplementationSchema,
]);

/**
 * A remote MCP server whose tools are placed into the session (`mcpTools(mcpEnv(...))`): at
 * creation the server calls its `tools/list` and places the tools named in `only` (all tools whose
 * names suit a model when absent) with the schemas it advertises. `headers` are sealed like an
 * HTTP Environment's; `prefix` is prepended to the Brain names; `timeoutMs` is each tool's own limit.
 */
export const McpServerSpecSchema = z.strictObject({
  name: EnvName,
  url: HttpUrlSchema,
  headers: z.record(HeaderName, z.string().max(8192)).optional(),
  only: z.array(z.string().min(1).max(256)).min(1).max(MAX_TOOLS_PER_SESSION).optional(),
  prefix: z
    .string()
    .regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,31}$/)
    .optional(),
  timeoutMs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

export const ToolPlacementSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN),
  description: z.string().max(4096),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.nullable(),
  env: EnvironmentRefSchema,
  /**
   * The tool's own run limit in ms; absent or 0: none of its own. A call's deadline is the earliest
   * of this, the session's and the turn's caller deadline, and BRAIN_MAX_TOOL_SECS when set.
   */
  timeoutMs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  /**
   * "always": each call waits for a person to approve it (as is or with edited input) or deny it
   * before it is dispatched (to its host, or to a worker's job). "predicate" (host tools only): the host that declares the tool asks its own
   * predicate of each call's input before running it, and holds the call for a person when it
   * answers true (an `approval` frame; the answer is journaled as approval_checked). Absent: calls
   * are dispatched and run at once.
   */
  approval: z.enum(["always", "predicate"]).optional(),
  /** How a non-host tool runs; host tools run their `run` function and have none. */
  implementation: ImplementationSchema.optional(),
  /** Parsed, frozen factory options, for tools that run outside the application's host connection. */
  options: z.json().optional(),
});

/** A session's system prompt: what its Agentloop sends the model before the conversation. */
const SystemPromptSchema = z
  .string()
  .min(1)
  .max(64 * 1024);

export const CreateSessionBodySchema = z.strictObject({
  model: ModelConfigSchema,
  /** The system prompt of every Agentloop model call; absent: none (an empty prompt). */
  system: SystemPromptSchema.optional(),
  tools: z.array(ToolPlacementSchema).max(MAX_TOOLS_PER_SESSION).default([]),
  hostId: Uuid.optional(),
  /**
   * Host environment names (of tools without a url) served by the named host of that name, owned
   * by the caller's token (`brain.hosts.serve`), instead of by `hostId`.
   */
  namedHosts: z.array(EnvName).max(64).optional(),
  /** Configurations of the HTTP Environments the tools are placed in (names unique). */
  environments: z.array(EnvironmentSpecSchema).max(64).optional(),
  /** Remote MCP servers whose tools the server places from their `tools/list` (names unique). */
  mcpServers: z.array(McpServerSpecSchema).max(16).optional(),
  /** What ctx.environments may do in this session; absent: nothing. */
  environmentControl: EnvironmentControlSchema.optional(),
  metadata: z.record(z.string().max(64), z.string().max(1024)).optional(),
  /** A caller-owned deadline for every tool call the session makes (`deadline` or `timeoutMs`). */
  ...CallerDeadlineFields,
  /** Initial workspace files (path → UTF-8 text), granted to tools through their Environment. */
  workspace: z
    .record(
      z
        .string()
        .min(1)
        .max(512)
        .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[^\0]+$/, "relative paths without .."),
      z.string().max(256 * 1024),
    )
    .optional(),
});

export const SessionSchema = z.object({
  id: Uuid,
  status: z.enum(["active", "ended"]),
  hostId: Uuid.nullable(),
  tools: z.array(z.string()),
  lastSequence: z.number().int(),
  metadata: z.record(z.string(), z.string()),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
  /** A fork's source and the last of its records the fork began with; absent for other sessions. */
  forkedFrom: z.object({ session: Uuid, sequence: z.number().int().positive() }).optional(),
});

export const SessionListSchema = z.object({
  sessions: z.array(SessionSchema),
  nextCursor: z.string().nullable(),
});

export const ListSessionsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});

export const PostMessageBodySchema = z.strictObject({
  text: z
    .string()
    .min(1)
    .max(MAX_MESSAGE_CHARS)
    .refine(isStorableText, "NUL characters and unpaired surrogates cannot be stored"),
  /** Hold the request until the activation this message starts has ended. */
  wait: z.boolean().default(false),
  /**
   * Hold the answer at most this long (ms) for the activation to end (`activation` null if it has
   * not). The status line and a `Brain-Sequence` header (the message's sequence) are sent as soon
   * as the message commits, so a client whose request breaks afterwards knows what to follow.
   */
  waitMs: z.number().int().min(1).max(MAX_MESSAGE_WAIT_MS).optional(),
  /**
   * A caller-owned deadline for the tool calls of the activation this message starts (`deadline`
   * or `timeoutMs`); it can only shorten the session's.
   */
  ...CallerDeadlineFields,
});

export const ActivationResultSchema = z.object({
  sequence: z.number().int(),
  status: z.enum(["completed", "cancelled", "failed"]),
  text: z.string(),
  /** Why a failed activation failed: an error code (e.g. model_budget_exceeded) and a message. */
  error: z
    .object({
      code: z.string(),
      message: z.string(),
      /** model_context_exceeded: the tokens asked and the model's window, when the provider said them. */
      details: z.object({ tokens: z.number().optional(), window: z.number().optional() }).optional(),
    })
    .optional(),
});

export const PostMessageResultSchema = z.object({
  sequence: z.number().int(),
  activation: ActivationResultSchema.nullable(),
});

export const EventsQuerySchema = z.strictObject({
  after: z.coerce.number().int().min(0).default(0),
  follow: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /** With follow: model calls' text as it streams, as live lines (live.ts) between the records. */
  live: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
});

/** One journal record as the API and the SDK show it; one line of the NDJSON event stream. */
export const JournalEventSchema = z.object({
  sequence: z.number().int().positive(),
  kind: z.string(),
  payload: z.json(),
  createdAt: z.string(),
});

export const RegisterHostBodySchema = z.strictObject({
  name: z.string().min(1).max(128).optional(),
});

/** A process that will serve a named host: the tools it serves (their env names the host). */
export const ServeHostBodySchema = z.strictObject({
  tools: z.array(ToolPlacementSchema).min(1).max(MAX_TOOLS_PER_SESSION),
});

/** A registered replica of a named host; its socket is `GET /v1/replicas/:replicaId/connect`. */
export const RegisteredReplicaSchema = z.object({
  hostId: Uuid,
  replicaId: Uuid,
  /** Shown once; Brain keeps only its SHA-256. */
  token: z.string(),
});

export const RegisteredHostSchema = z.object({
  id: Uuid,
  /** Shown once; Brain keeps only its SHA-256. */
  token: z.string(),
});

/** POST /v1/sessions/:id/cancel: the cancel_requested record. */
export const CancelTurnResultSchema = z.object({ sequence: z.number().int() });
/** POST /v1/sessions/:id/calls/:seq/cancel: false when the call had already ended. */
export const CancelCallResultSchema = z.object({ cancelled: z.boolean(), sequence: z.number().int().nullable() });
/** GET /v1/sessions/:id/tools: the placements as advertised at creation. */
export const SessionToolsSchema = z.object({
  hostId: Uuid.nullable(),
  tools: z.array(ToolPlacementSchema),
  /** Host environment names served by named hosts (not by `hostId`). */
  namedHosts: z.array(z.string()).optional(),
});

/** The protocol of the Application tool extension (a host placement with `url`, protocol "tool"). */
export const HTTP_TOOL_PROTOCOL = "brain.tool/2";

/**
 * What Brain POSTs to an application serving its tools over HTTP (`toolHandler`, `fastifyTools`):
 * one invocation of one call. The handler reports on the call only through `callback`: each frame
 * is POSTed to `callback.url` with `Authorization: Bearer <callback.token>`, a token that names this
 * call alone and is useless once it ended. The request lasts until the handler answers, `deadline`
 * passes or Brain closes it; nothing the application does afterwards reaches the journal.
 */
export const HttpToolInvocationSchema = z.strictObject({
  protocol: z.literal(HTTP_TOOL_PROTOCOL),
  tool: z.string().regex(TOOL_NAME_PATTERN),
  sessionId: Uuid,
  /** The sequence of the call's tool_call_started: with sessionId it names the call. */
  sequence: z.number().int().positive(),
  input: z.json(),
  /** The placement's options as Brain holds them (null for `run` tools: the application's own apply). */
  options: z.json().nullable(),
  /** Absolute deadline in epoch ms; null means unlimited. */
  deadline: z.number().nullable(),
  callback: z.strictObject({ url: HttpUrlSchema, token: z.string().min(1).max(512) }),
});

const CallbackContent = z
  .string()
  .max(256 * 1024)
  .optional();
/**
 * POST /v1/calls/:sessionId/:sequence/frames: what an HTTP application tool reports about its call,
 * with the rules a host's `result` / `finish` frames get. There is no `emit`: HTTP tools publish no
 * arbitrary events.
 */
export const CallFrameBodySchema = z.discriminatedUnion("type", [
  /** ctx.emitResult: one more result; the call stays open unless the outcome is not ok. */
  z.strictObject({ type: z.literal("result"), outcome: OutcomeSchema, content: CallbackContent }),
  /** ctx.finish: optionally one more result, then completion. */
  z.strictObject({ type: z.literal("finish"), outcome: OutcomeSchema.optional(), content: CallbackContent }),
]);
/** The answer once the frame has committed: the durable acknowledgment. */
export const CallFrameResultSchema = z.object({ sequence: z.number().int().positive() });

export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

export type EnvironmentRef = z.infer<typeof EnvironmentRefSchema>;
export type EnvironmentSpec = z.infer<typeof EnvironmentSpecSchema>;
export type McpServerSpec = z.infer<typeof McpServerSpecSchema>;
export type McpImplementation = z.infer<typeof McpImplementationSchema>;
export type EnvironmentPatch = z.infer<typeof EnvironmentPatchSchema>;
export type EnvironmentControl = z.infer<typeof EnvironmentControlSchema>;
export type EnvironmentOperation = z.infer<typeof EnvironmentOperationSchema>;
export type EnvironmentView = z.infer<typeof EnvironmentViewSchema>;
export type HttpEnvironmentConfig = z.infer<typeof HttpEnvironmentConfigSchema>;
export type Implementation = z.infer<typeof ImplementationSchema>;
export type Grants = z.infer<typeof GrantsSchema>;
export const ComponentUploadResultSchema = z.object({ sha256: Sha256Schema, size: z.number().int(), wit: z.string() });
export type ComponentUploadResult = z.infer<typeof ComponentUploadResultSchema>;
export type ToolPlacement = z.infer<typeof ToolPlacementSchema>;
export type CreateSessionBody = z.input<typeof CreateSessionBodySchema>;
export type Session = z.infer<typeof SessionSchema>;
export type SessionList = z.infer<typeof SessionListSchema>;
export type PostMessageBody = z.input<typeof PostMessageBodySchema>;
export type PostMessageResult = z.infer<typeof PostMessageResultSchema>;
export type ActivationResult = z.infer<typeof ActivationResultSchema>;
export type JournalEvent = z.infer<typeof JournalEventSchema>;
export type RegisteredHost = z.infer<typeof RegisteredHostSchema>;
export type ServeHostBody = z.infer<typeof ServeHostBodySchema>;
export type RegisteredReplica = z.infer<typeof RegisteredReplicaSchema>;
export type SessionTools = z.infer<typeof SessionToolsSchema>;
export type HttpToolInvocation = z.infer<typeof HttpToolInvocationSchema>;
export type CallFrameBody = z.infer<typeof CallFrameBodySchema>;
export type CallFrameResult = z.infer<typeof CallFrameResultSchema>;

/** A decision on a call waiting for approval: as is, or with edited input (checked against the tool's schema). */
export const ApproveCallBodySchema = z.strictObject({ input: z.json().optional() });
export const DenyCallBodySchema = z.strictObject({ reason: z.string().max(4096).optional() });
export const ApprovalDecisionSchema = z.object({
  call: z.number().int().positive(),
  decision: z.enum(["approved", "denied"]),
  /** The approval_decided record. */
  sequence: z.number().int().positive(),
});

/** A call waiting for approval. */
export const PendingApprovalSchema = z.object({
  call: z.number().int().positive(),
  tool: z.string(),
  callId: z.string(),
  input: z.json(),
  inputHash: z.string(),
  /** Epoch ms, or null for none: the call ends `timeout` then, approved or not. */
  deadline: z.number().nullable(),
  requestedAt: z.string(),
});
export const PendingApprovalListSchema = z.object({ approvals: z.array(PendingApprovalSchema) });
export type PendingApproval = z.infer<typeof PendingApprovalSchema>;

/**
 * A fork: a new session whose journal is this one's up to `at` (what was open then is closed in
 * the fork's journal), with the same tools, served as any session's; `model` replaces the model.
 */
export const ForkSessionBodySchema = z.strictObject({
  at: z.number().int().positive(),
  model: ModelConfigSchema.optional(),
  /** Another system prompt for the fork's turns; absent: the source's. */
  system: SystemPromptSchema.optional(),
});
