import { z } from "zod";

export const SessionParamsSchema = z.strictObject({ id: z.uuid() });
export const IdempotencyKeySchema = z.string().min(1).max(256).optional();

export function idempotencyKey(headers: Record<string, unknown>): string | undefined {
  const value = headers["idempotency-key"];
  return typeof value === "string" ? value : undefined;
}
