import { z } from "zod";

/**
 * Independent model calls from tools (`ctx.model`, the WIT `model` import): the request names
 * everything explicitly. An omitted system prompt is empty, omitted tools are none, and there is no
 * default response format. The session's provider, model and credentials apply; a request cannot
 * name others.
 */

const Text = z.string().max(1024 * 1024);
export const ModelToolCallSchema = z.strictObject({
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(128),
  input: z.json(),
});

/**
 * A block of a model's extended thinking (Anthropic's), as it answered it: its text and the
 * signature that lets the provider check it when it is sent back, or a redacted block's data.
 * Sent back unchanged with the assistant message that follows it, as tool use requires.
 */
export const ThinkingBlockSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("thinking"), thinking: Text, signature: z.string().max(65_536) }),
  z.strictObject({ type: z.literal("redacted_thinking"), data: z.string().max(1024 * 1024) }),
]);

export const ModelMessageSchema = z.discriminatedUnion("role", [
  z.strictObject({ role: z.literal("user"), content: Text }),
  z.strictObject({
    role: z.literal("assistant"),
    content: Text,
    toolCalls: z.array(ModelToolCallSchema).max(64).optional(),
    /** The thinking the model answered with, before its text and tool calls. */
    thinking: z.array(ThinkingBlockSchema).max(64).optional(),
  }),
  z.strictObject({
    role: z.literal("tool"),
    toolCallId: z.string().min(1).max(256),
    name: z.string().min(1).max(128),
    content: Text,
  }),
]);

export const ModelToolSchema = z.strictObject({
  name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/),
  description: z.string().max(4096),
  inputSchema: z.record(z.string(), z.json()),
});

/** `text`: free text. `json`: a JSON answer, optionally constrained by a JSON Schema. */
export const ResponseFormatSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json"), schema: z.record(z.string(), z.json()).optional() }),
]);

export const ModelRequestSchema = z.strictObject({
  system: Text.optional(),
  messages: z.array(ModelMessageSchema).min(1).max(512),
  tools: z.array(ModelToolSchema).max(128).optional(),
  responseFormat: ResponseFormatSchema.optional(),
  /** Upper bound on generated tokens; the provider's own default when omitted. */
  maxTokens: z.number().int().positive().max(1_000_000).optional(),
});

export const ModelUsageSchema = z.object({
  /** Every input token, cached ones included. */
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  /** Of the input, tokens read from the provider's prompt cache (billed at a fraction). */
  cachedInputTokens: z.number().int().nonnegative().optional(),
  /** Of the input, tokens written to the prompt cache (Anthropic bills them at a premium). */
  cacheWriteInputTokens: z.number().int().nonnegative().optional(),
});

export const ModelResultSchema = z.object({
  text: z.string(),
  toolCalls: z.array(ModelToolCallSchema),
  /** Why generation stopped: "end", "tool_calls", "max_tokens" or "other". */
  stopReason: z.enum(["end", "tool_calls", "max_tokens", "other"]),
  usage: ModelUsageSchema,
  /** The model that answered, as the provider named it. */
  model: z.string(),
  /** What the model showed of its reasoning, when the provider sent it apart. */
  reasoning: z.string().optional(),
  /** Journal sequence of the model_call_ended record that holds this answer. */
  sequence: z.number().int().positive(),
});

export type ModelToolCall = z.infer<typeof ModelToolCallSchema>;
export type ModelMessage = z.infer<typeof ModelMessageSchema>;
export type ThinkingBlock = z.infer<typeof ThinkingBlockSchema>;
export type ModelTool = z.infer<typeof ModelToolSchema>;
export type ResponseFormat = z.infer<typeof ResponseFormatSchema>;
export type ModelRequest = z.input<typeof ModelRequestSchema>;
export type ModelUsage = z.infer<typeof ModelUsageSchema>;
export type ModelResult = z.infer<typeof ModelResultSchema>;
