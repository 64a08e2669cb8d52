/**
 * Application tokens on the wire (POST, GET, PATCH and DELETE /v1/tokens, operator only): the
 * token itself is shown once, at creation; the operator sets each token's quotas.
 */
import { z } from "zod";
import { isStorableText } from "./storable.js";

/** Application tokens start with this, so a leaked one is easy to find (and to scan for). */
export const APP_TOKEN_PREFIX = "brain_app_";

const QuotaValue = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable();
/**
 * An application token's quotas, set by the operator: the most active sessions, hosts (named-host
 * replicas included), open tool calls and bytes of uploaded components it may have at once. null:
 * the server's default (BRAIN_QUOTA_*); absent from a change: left as it is.
 */
export const TokenQuotasSchema = z.strictObject({
  sessions: QuotaValue.optional(),
  hosts: QuotaValue.optional(),
  openCalls: QuotaValue.optional(),
  componentBytes: QuotaValue.optional(),
});

/** POST /v1/tokens. */
export const CreateTokenBodySchema = z.strictObject({
  name: z.string().min(1).max(128).refine(isStorableText, "NUL characters and unpaired surrogates cannot be stored"),
  quotas: TokenQuotasSchema.optional(),
});

/** PATCH /v1/tokens/:id: the operator changes a token's quotas. */
export const UpdateTokenBodySchema = z.strictObject({ quotas: TokenQuotasSchema });

/** An application token as listed: never the token itself, which only its creation shows. */
export const AppTokenSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  /** Its own quotas; null: the server's default. */
  quotas: z.object({
    sessions: QuotaValue,
    hosts: QuotaValue,
    openCalls: QuotaValue,
    componentBytes: QuotaValue,
  }),
});

/** POST /v1/tokens: the token is shown here once; Brain keeps only its SHA-256. */
export const CreatedTokenSchema = AppTokenSchema.extend({ token: z.string().startsWith(APP_TOKEN_PREFIX) });

export const AppTokenListSchema = z.object({ tokens: z.array(AppTokenSchema) });

export type AppToken = z.infer<typeof AppTokenSchema>;
export type TokenQuotas = z.infer<typeof TokenQuotasSchema>;
export type CreatedToken = z.infer<typeof CreatedTokenSchema>;
