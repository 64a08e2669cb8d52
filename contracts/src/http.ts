import { z } from "zod";
import { TOOL_NAME_PATTERN } from "./journal.js";
import { MAX_MESSAGE_CHARS, MAX_SCRIPT_STEPS, MAX_TOOLS_PER_SESSION } from "./limits.js";

/** Bodies and answers of the HTTP API (`/v1`). Each is the single definition both ends use. */

const JsonSchemaObject = z.record(z.string(), z.json());
const Uuid = z.uuid();
const EnvName = z.string().regex(/^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/);

/** Resources an Environment may grant to the tools bound to it. */
export const GrantsSchema = z.strictObject({
  /** The session's workspace: "read" preopens it read-only; absent means no filesystem at all. */
  workspace: z.enum(["read", "write"]).optional(),
});

/** An application host: the registering application (default name "application") or a named one. */
export const HostEnvironmentRefSchema = z.strictObject({ type: z.literal("host"), name: EnvName });
/** Brain's own runtime: component tools run by workers, with the binding's grants. */
export const BrainEnvironmentRefSchema = z.strictObject({
  type: z.literal("brain"),
  name: EnvName,
  filesystem: GrantsSchema.optional(),
});
/** Where a placed tool runs. */
export const EnvironmentRefSchema = z.discriminatedUnion("type", [HostEnvironmentRefSchema, BrainEnvironmentRefSchema]);

export const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);
/** A WebAssembly component exporting brain:tool, uploaded beforehand (PUT /v1/components/:sha256). */
export const ComponentImplementationSchema = z.strictObject({ type: z.literal("component"), sha256: Sha256Schema });

export const ToolPlacementSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN),
  description: z.string().max(4096),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.nullable(),
  env: EnvironmentRefSchema,
  /** The tool's own run limit in ms; the server bounds it by BRAIN_MAX_TOOL_SECS. 0 = unlimited. */
  timeoutMs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  /** How a non-host tool runs; host tools run their `run` function and have none. */
  implementation: ComponentImplementationSchema.optional(),
  /** Parsed, frozen factory options, for tools that run outside the application (components). */
  options: z.json().optional(),
});

export const ScriptedToolCallSchema = z.strictObject({
  name: z.string().min(1).max(128),
  input: z.json(),
});
export const ScriptStepSchema = z.union([
  z.strictObject({ text: z.string().max(MAX_MESSAGE_CHARS) }),
  z.strictObject({
    toolCalls: z.array(ScriptedToolCallSchema).min(1).max(64),
    text: z.string().max(MAX_MESSAGE_CHARS).optional(),
  }),
]);

export const ModelConfigSchema = z.discriminatedUnion("provider", [
  z.strictObject({
    provider: z.literal("scripted"),
    script: z.array(ScriptStepSchema).max(MAX_SCRIPT_STEPS),
  }),
]);

export const CreateSessionBodySchema = z.strictObject({
  model: ModelConfigSchema,
  tools: z.array(ToolPlacementSchema).max(MAX_TOOLS_PER_SESSION).default([]),
  hostId: Uuid.optional(),
  metadata: z.record(z.string().max(64), z.string().max(1024)).optional(),
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
});

export const SessionListSchema = z.object({
  sessions: z.array(SessionSchema),
  nextCursor: z.string().nullable(),
});

export const ListSessionsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});

/** Text Postgres can store: no NUL characters, no unpaired UTF-16 surrogates. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const storable = (t: string) => !t.includes("\u0000") && !UNPAIRED_SURROGATE.test(t);

export const PostMessageBodySchema = z.strictObject({
  text: z
    .string()
    .min(1)
    .max(MAX_MESSAGE_CHARS)
    .refine(storable, "NUL characters and unpaired surrogates cannot be stored"),
  /** Hold the request until the activation this message starts has ended. */
  wait: z.boolean().default(false),
});

export const ActivationResultSchema = z.object({
  sequence: z.number().int(),
  status: z.enum(["completed", "cancelled", "failed"]),
  text: z.string(),
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
export const SessionToolsSchema = z.object({ hostId: Uuid.nullable(), tools: z.array(ToolPlacementSchema) });

export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

export type EnvironmentRef = z.infer<typeof EnvironmentRefSchema>;
export type Grants = z.infer<typeof GrantsSchema>;
export const ComponentUploadResultSchema = z.object({ sha256: Sha256Schema, size: z.number().int(), wit: z.string() });
export type ComponentUploadResult = z.infer<typeof ComponentUploadResultSchema>;
export type ToolPlacement = z.infer<typeof ToolPlacementSchema>;
export type ScriptStep = z.infer<typeof ScriptStepSchema>;
export type ModelConfig = z.infer<typeof ModelConfigSchema>;
export type CreateSessionBody = z.input<typeof CreateSessionBodySchema>;
export type Session = z.infer<typeof SessionSchema>;
export type SessionList = z.infer<typeof SessionListSchema>;
export type PostMessageBody = z.input<typeof PostMessageBodySchema>;
export type PostMessageResult = z.infer<typeof PostMessageResultSchema>;
export type ActivationResult = z.infer<typeof ActivationResultSchema>;
export type JournalEvent = z.infer<typeof JournalEventSchema>;
export type RegisteredHost = z.infer<typeof RegisteredHostSchema>;
export type SessionTools = z.infer<typeof SessionToolsSchema>;
