import { z } from "zod";
import { JsonFieldSchema } from "./json.js";

/**
 * Outcome envelopes. A tool's result is ordinary output (wrapped as `ok`) or one of these.
 * `ok`/`error` come from tools; `timeout`/`cancelled`/`unknown` are written by Brain and say why
 * the caller stopped waiting, without promising rollback.
 */
export const RESERVED_STATUSES = ["ok", "error", "timeout", "cancelled", "unknown"] as const;
export type OutcomeStatus = (typeof RESERVED_STATUSES)[number];

export const ToolErrorSchema = z.strictObject({
  code: z.string().min(1).max(128),
  message: z.string().max(8192),
  retryable: z.boolean().optional(),
  details: JsonFieldSchema.optional(),
});

export const OkOutcomeSchema = z.strictObject({ status: z.literal("ok"), value: JsonFieldSchema });
export const ErrorOutcomeSchema = z.strictObject({ status: z.literal("error"), error: ToolErrorSchema });
/** Causes Brain records for interrupted calls. */
export const InterruptionCauseSchema = z.enum([
  "deadline",
  "sdk_cancel",
  // An MCP client's tasks/cancel (Brain as an MCP server).
  "mcp_cancel",
  "turn_cancelled",
  "session_ended",
  "connection_lost",
  "server_lost",
  "worker_lost",
  // The database could not take a report that would have ended the call (or went away under it).
  "journal_unavailable",
]);
export const TimeoutOutcomeSchema = z.strictObject({
  status: z.literal("timeout"),
  cause: InterruptionCauseSchema.optional(),
  message: z.string().max(8192).optional(),
});
export const CancelledOutcomeSchema = z.strictObject({
  status: z.literal("cancelled"),
  cause: InterruptionCauseSchema.optional(),
  message: z.string().max(8192).optional(),
});
export const UnknownOutcomeSchema = z.strictObject({
  status: z.literal("unknown"),
  cause: InterruptionCauseSchema.optional(),
  message: z.string().max(8192).optional(),
});

export const OutcomeSchema = z.discriminatedUnion("status", [
  OkOutcomeSchema,
  ErrorOutcomeSchema,
  TimeoutOutcomeSchema,
  CancelledOutcomeSchema,
  UnknownOutcomeSchema,
]);

export type Outcome = z.infer<typeof OutcomeSchema>;
export type OkOutcome = z.infer<typeof OkOutcomeSchema>;
export type ErrorOutcome = z.infer<typeof ErrorOutcomeSchema>;
export type ToolError = z.infer<typeof ToolErrorSchema>;
export type InterruptionCause = z.infer<typeof InterruptionCauseSchema>;

/** The terminal outcome of a call that finished without publishing any result. */
export const FinishedWithoutResultSchema = z.strictObject({ status: z.literal("ok") });
export const TerminalOutcomeSchema = z.union([OutcomeSchema, FinishedWithoutResultSchema]);
export type TerminalOutcome = z.infer<typeof TerminalOutcomeSchema>;

export function errorOutcome(code: string, message: string, details?: unknown): ErrorOutcome {
  const error: ToolError = { code, message };
  if (details !== undefined) error.details = details as ToolError["details"];
  return { status: "error", error };
}

export function isSuccess(outcome: { status: string }): boolean {
  return outcome.status === "ok";
}
