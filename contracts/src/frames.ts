import { z } from "zod";
import { EnvironmentOperationSchema } from "./http.js";
import { JsonFieldSchema } from "./json.js";
import { OutcomeSchema } from "./outcome.js";

/**
 * WebSocket frames between Brain and an application host (`GET /v1/hosts/connect`). Text frames of
 * JSON, at most MAX_FRAME_BYTES. A tool call is named by (sessionId, sequence) everywhere. A result,
 * return or finish frame larger than that travels as consecutive `part` frames (see PartFrameSchema).
 */

const Uuid = z.uuid();
const Seq = z.number().int().positive();
/** Client-chosen id, echoed by `ack` / `reject`. */
const RequestId = z.number().int().nonnegative();
const Content = z
  .string()
  .max(256 * 1024)
  .optional();

export const EmitFrameSchema = z.strictObject({
  type: z.literal("emit"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  kind: z.string(),
  data: JsonFieldSchema,
});
/** ctx.emitResult: one more result, the call stays open (unless the outcome is not ok). */
export const ResultFrameSchema = z.strictObject({
  type: z.literal("result"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  outcome: OutcomeSchema,
  content: Content,
});
/** `run` returned: the synchronous phase ended, with or without a result. */
export const ReturnFrameSchema = z.strictObject({
  type: z.literal("return"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  outcome: OutcomeSchema.optional(),
  content: Content,
});
/** ctx.finish: optionally one more result, then completion. */
export const FinishFrameSchema = z.strictObject({
  type: z.literal("finish"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  outcome: OutcomeSchema.optional(),
  content: Content,
});
/**
 * The answer of the tool's approval predicate for this call (a tool placed with `approval:
 * "predicate"`), sent before its handler runs; journaled as approval_checked. `required`: the host
 * did not run the call, which waits for a person's decision and is invoked again (`approved`) once
 * approved. Accepted only while the call is running on this host and not yet approved.
 */
export const ApprovalFrameSchema = z.strictObject({
  type: z.literal("approval"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  required: z.boolean(),
});
export const PingFrameSchema = z.strictObject({ type: z.literal("ping"), id: RequestId });
/**
 * ctx.model: one independent model call on behalf of the open call. `request` is a ModelRequest,
 * validated by the server (invalid_model_request). Answered by an ack whose `value` is the
 * ModelResult, or a reject.
 */
export const ModelFrameSchema = z.strictObject({
  type: z.literal("model"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  request: JsonFieldSchema,
});
/** ctx.environments: one operation; answered by an ack whose `value` is its result, or a reject. */
export const EnvironmentFrameSchema = z.strictObject({
  type: z.literal("environment"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  operation: EnvironmentOperationSchema,
  name: z.string().max(64).optional(),
  params: JsonFieldSchema.optional(),
});

/**
 * One slice of a result, return or finish frame too large for one WebSocket frame: the text of the
 * whole frame (whose `id` is this `id`) is the concatenation of its parts' `data`, sent one after
 * another with nothing in between; `last` marks the final part. Results have no size limit of
 * their own, only the activation's emission budget: the server stops collecting (and answers
 * `budget_exceeded`, ending the call) once the parts exceed what the budget could ever admit.
 * Control frames (emit, model, ...) stay within MAX_FRAME_BYTES.
 */
export const PartFrameSchema = z.strictObject({
  type: z.literal("part"),
  id: RequestId,
  sessionId: Uuid,
  sequence: Seq,
  data: z.string(),
  last: z.boolean(),
});

/**
 * The host now serves this session's tools (a connection opened with `?sessions=attached`): Brain
 * sends it the session's calls, the pending ones included. Until then they wait, so a client that
 * reattached only some of its host's sessions is never sent another session's call.
 */
export const AttachFrameSchema = z.strictObject({ type: z.literal("attach"), id: RequestId, sessionId: Uuid });

export const HostFrameSchema = z.discriminatedUnion("type", [
  EmitFrameSchema,
  ResultFrameSchema,
  ReturnFrameSchema,
  FinishFrameSchema,
  ApprovalFrameSchema,
  PingFrameSchema,
  ModelFrameSchema,
  EnvironmentFrameSchema,
  PartFrameSchema,
  AttachFrameSchema,
]);

export const WelcomeFrameSchema = z.object({
  type: z.literal("welcome"),
  hostId: Uuid,
  connectionId: Uuid,
  heartbeatMs: z.number().int().positive(),
});
export const InvokeFrameSchema = z.object({
  type: z.literal("invoke"),
  sessionId: Uuid,
  sequence: Seq,
  tool: z.string(),
  input: JsonFieldSchema,
  /** Absolute deadline in epoch ms; null means unlimited. */
  deadline: z.number().nullable(),
  /** A person approved this call (an approval gate): run it without asking the tool's predicate. */
  approved: z.literal(true).optional(),
});
export const AckFrameSchema = z.object({
  type: z.literal("ack"),
  id: RequestId,
  /** Journal sequence of the committed record (the last one, when a frame wrote several). */
  sequence: z.number().int().nullable(),
  /** The answer of a request frame (model, environment), when it has one. */
  value: JsonFieldSchema.optional(),
});
export const RejectFrameSchema = z.object({
  type: z.literal("reject"),
  id: RequestId.nullable(),
  error: z.object({ code: z.string(), message: z.string() }),
});
export const CancelFrameSchema = z.object({
  type: z.literal("cancel"),
  sessionId: Uuid,
  sequence: Seq,
  status: z.enum(["timeout", "cancelled", "unknown"]),
});
/** The session ended or was deleted: drop its handlers. */
export const ReleaseFrameSchema = z.object({ type: z.literal("release"), sessionId: Uuid });
export const PongFrameSchema = z.object({ type: z.literal("pong"), id: RequestId });

export const ServerFrameSchema = z.discriminatedUnion("type", [
  WelcomeFrameSchema,
  InvokeFrameSchema,
  AckFrameSchema,
  RejectFrameSchema,
  CancelFrameSchema,
  ReleaseFrameSchema,
  PongFrameSchema,
]);

export type HostFrame = z.infer<typeof HostFrameSchema>;
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
export type InvokeFrame = z.infer<typeof InvokeFrameSchema>;
export type CancelFrame = z.infer<typeof CancelFrameSchema>;
