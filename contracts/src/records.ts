import { z } from "zod";
import { ModelResultSchema, ModelToolCallSchema, ModelUsageSchema, ThinkingBlockSchema } from "./model.js";
import { RESERVED_STATUSES } from "./outcome.js";

/**
 * The journal's records, one schema per kind's payload: what Brain writes under each of its own
 * record kinds (RECORD_KINDS), and what every reader of a journal (the Agentloop's fold, traces,
 * metrics, the console, the SDK) may rely on. The fields a reader uses are typed here; a payload
 * may carry more (a model call's request, an MCP tool's contract), so each schema lets other keys
 * through. Every journal a test server writes is checked against these schemas when the test
 * ends (testkit/journal-shapes.ts), so a writer that drifts from them fails the suite.
 *
 * Sequences are journal positions: `call` names a tool call (or a model call) by the sequence of
 * the record that started it, `activation` an activation by its activation_started.
 */

const seq = z.number().int().positive();

/** An outcome as journaled: a tool's (validated at the frame), or one Brain recorded itself. */
export const RecordedOutcomeSchema = z.looseObject({
  status: z.enum(RESERVED_STATUSES),
  value: z.unknown().optional(),
  error: z.looseObject({ code: z.string(), message: z.string().optional() }).optional(),
  /** Why Brain stopped waiting (an interruption) or why a model call's outcome is unknown. */
  cause: z.string().optional(),
  message: z.string().optional(),
});
export type RecordedOutcome = z.infer<typeof RecordedOutcomeSchema>;

/** Who made a model call: the Agentloop, or a tool (ctx.model) by its call. */
export const ModelCallOriginSchema = z.union([
  z.strictObject({ type: z.literal("agentloop") }),
  z.strictObject({ type: z.literal("tool"), sessionId: z.string(), sequence: seq }),
]);

/** Who made a tool call outside the Agentloop: an MCP client of Brain's own MCP server. */
export const ToolCallOriginSchema = z.looseObject({ type: z.literal("mcp") });

/** A context window's numbers, when the provider said them (model_context_exceeded). */
export const ContextExceededSchema = z.looseObject({ tokens: z.number().optional(), window: z.number().optional() });

export const TurnErrorSchema = z.looseObject({
  code: z.string(),
  message: z.string(),
  details: ContextExceededSchema.optional(),
});

export const SessionCreatedSchema = z.looseObject({
  model: z.looseObject({ provider: z.string(), name: z.string().optional() }),
  tools: z.array(z.looseObject({ name: z.string() })),
  hostId: z.string().nullable(),
  /** The system prompt of its Agentloop's model calls (a fork's own when it was given one). */
  system: z.string().optional(),
  /** The session's caller deadline, epoch ms. */
  deadline: z.number().optional(),
  namedHosts: z.array(z.string()).optional(),
  mcpTools: z.array(z.unknown()).optional(),
  /** A fork's: the session and the sequence its journal was copied from. */
  forkedFrom: z
    .looseObject({
      session: z.string(),
      sequence: seq,
      /** With a model of its own: the Agentloop model calls copied, which that model did not answer. */
      modelCalls: z.number().int().min(0).optional(),
    })
    .optional(),
});

export const UserMessageSchema = z.looseObject({ text: z.string(), deadline: z.number().optional() });

export const ActivationStartedSchema = z.looseObject({
  cause: z.enum(["user_message", "observations"]),
  /** The user_message this activation answers. */
  message: seq.optional(),
  /** The later results (tool_result, tool_call_ended) it shows the model. */
  observations: z.array(seq).optional(),
  /** The wake window that gathered them (loop/wake-window.ts). */
  wake: z.unknown().optional(),
});

export const ModelCallStartedSchema = z.looseObject({
  origin: ModelCallOriginSchema,
  activation: seq,
  wake: z.unknown().optional(),
  /** A tool's request (ctx.model), as journaled. */
  request: z.unknown().optional(),
});

export const ModelAttemptSchema = z.looseObject({
  status: z.number().int().optional(),
  error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
  waitMs: z.number().nonnegative().optional(),
});

export const ModelCallEndedSchema = z.looseObject({
  call: seq,
  outcome: RecordedOutcomeSchema,
  origin: ModelCallOriginSchema.optional(),
  response: z
    .looseObject({
      text: z.string(),
      toolCalls: z.array(ModelToolCallSchema),
      stopReason: ModelResultSchema.shape.stopReason.optional(),
      /** What the model showed of its reasoning, when the provider sent it apart. */
      reasoning: z.string().optional(),
      /** Extended thinking blocks with their signatures, sent back with the conversation. */
      thinking: z.array(ThinkingBlockSchema).optional(),
    })
    .optional(),
  model: z.string().optional(),
  usage: ModelUsageSchema.optional(),
  /**
   * Every attempt, when the provider's request was tried more than once: each failed one's status
   * and error and the wait before the next; the last is the call's own outcome.
   */
  attempts: z.array(ModelAttemptSchema).optional(),
});

export const AssistantMessageSchema = z.looseObject({ activation: seq, text: z.string() });

export const ActivationEndedSchema = z.looseObject({
  activation: seq,
  message: seq.nullable(),
  status: z.enum(["completed", "failed", "cancelled"]),
  text: z.string(),
  /** Why a failed activation failed: the SDK rejects `send` with this code. */
  error: TurnErrorSchema.optional(),
});

export const ToolCallStartedSchema = z.looseObject({
  tool: z.string(),
  callId: z.string(),
  input: z.unknown(),
  /** The call waits for a person's decision (an approval gate): the SHA-256 of its input, in hex. */
  approval: z.looseObject({ inputHash: z.string() }).optional(),
  /** Null for an MCP client's call: it belongs to no activation. */
  activation: seq.nullable(),
  /** Epoch ms, or null for unlimited. */
  deadline: z.number().nullable(),
  origin: ToolCallOriginSchema.optional(),
});

export const ToolResultSchema = z.looseObject({
  call: seq,
  outcome: RecordedOutcomeSchema,
  content: z.string().optional(),
});

export const ToolReturnedSchema = z.looseObject({ call: seq });

export const ToolCallEndedSchema = z.looseObject({ call: seq, outcome: RecordedOutcomeSchema });

export const EmissionRejectedSchema = z.looseObject({
  call: seq,
  kind: z.string(),
  bytes: z.number(),
  code: z.string(),
});

export const EnvironmentOperationRecordSchema = z.looseObject({
  call: seq,
  operation: z.string(),
  name: z.string().nullable(),
  outcome: RecordedOutcomeSchema,
});

/**
 * A decision on a call waiting for approval: who made it (the operator, or the application token's
 * id), and for an approval with edited input, that input (the original stays in tool_call_started).
 */
export const ApprovalDecidedSchema = z.looseObject({
  call: seq,
  decision: z.enum(["approved", "denied"]),
  by: z.string(),
  input: z.unknown().optional(),
  reason: z.string().optional(),
});

/**
 * The answer of an approval predicate (a tool placed with `approval: "predicate"`), asked by the
 * host before it ran the call: `required` true holds the call for a person's decision, with the
 * SHA-256 of its input (hex) as a decision binds it; false lets it run.
 */
export const ApprovalCheckedSchema = z.looseObject({
  call: seq,
  required: z.boolean(),
  inputHash: z.string().optional(),
});

export const CancelRequestedSchema = z.looseObject({ by: z.string() });

export const SessionEndedSchema = z.looseObject({ reason: z.string() });

/** Each record kind of Brain's own, and its payload's schema. */
export const RECORD_PAYLOADS = {
  session_created: SessionCreatedSchema,
  user_message: UserMessageSchema,
  activation_started: ActivationStartedSchema,
  model_call_started: ModelCallStartedSchema,
  model_call_ended: ModelCallEndedSchema,
  assistant_message: AssistantMessageSchema,
  activation_ended: ActivationEndedSchema,
  tool_call_started: ToolCallStartedSchema,
  tool_result: ToolResultSchema,
  tool_returned: ToolReturnedSchema,
  tool_call_ended: ToolCallEndedSchema,
  approval_checked: ApprovalCheckedSchema,
  approval_decided: ApprovalDecidedSchema,
  emission_rejected: EmissionRejectedSchema,
  environment_operation: EnvironmentOperationRecordSchema,
  cancel_requested: CancelRequestedSchema,
  session_ended: SessionEndedSchema,
} as const;

export type BrainRecordKind = keyof typeof RECORD_PAYLOADS;
export type RecordPayload<K extends BrainRecordKind> = z.infer<(typeof RECORD_PAYLOADS)[K]>;

/** A record of one of `K`'s kinds, its payload typed by its kind. */
export type BrainRecordOf<K extends BrainRecordKind> = {
  [P in K]: { seq: number; kind: P; payload: RecordPayload<P> };
}[K];

/** A record of one of Brain's own kinds, its payload typed by its kind. */
export type BrainRecord = BrainRecordOf<BrainRecordKind>;

/** Any journal record as read: Brain's own kinds typed, a tool's emissions (ctx.emit) opaque. */
export interface StoredRecord {
  seq: number;
  kind: string;
  payload: unknown;
}

export function isBrainKind(kind: string): kind is BrainRecordKind {
  return Object.hasOwn(RECORD_PAYLOADS, kind);
}

/**
 * A stored record as its kind's type. Not a validation: Brain wrote it to its kind's schema (the
 * suite checks every journal it writes), so reading it needs no parse on the hot path. Null for a
 * kind that is not Brain's own.
 */
export function brainRecord(record: StoredRecord): BrainRecord | null {
  return isBrainKind(record.kind) ? (record as BrainRecord) : null;
}

/** Validates a stored record of Brain's own kind against its schema; the issues when it fails. */
export function checkRecord(record: StoredRecord): z.core.$ZodIssue[] {
  if (!isBrainKind(record.kind)) return [];
  const parsed = RECORD_PAYLOADS[record.kind].safeParse(record.payload);
  return parsed.success ? [] : parsed.error.issues;
}

/** The payload of `record` as `kind`'s, when it is a record of that kind (see brainRecord); else null. */
export function payloadOf<K extends BrainRecordKind>(
  record: Pick<StoredRecord, "kind" | "payload"> | undefined,
  kind: K,
): RecordPayload<K> | null {
  return record?.kind === kind ? (record.payload as RecordPayload<K>) : null;
}
