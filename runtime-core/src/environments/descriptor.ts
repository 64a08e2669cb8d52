/**
 * The descriptors an HTTP Environment interprets. A tool's `implementation: (options) => ...` is
 * frozen at placement and reaches the Environment unchanged with every invocation; this is where
 * it is finally read. Anything else is an unsupported runtime: a setup failure, never retried.
 */
import { errorOutcome, HttpMethodSchema, issuesText, type Outcome } from "@aexhq/brain-contracts";
import { z } from "zod";

/**
 * `{ type: "http_json", method, path }`: `path` is relative to the Environment's base URL and may
 * hold `{field}` placeholders, filled from the input's top-level fields.
 */
export const HttpJsonDescriptorSchema = z.strictObject({
  type: z.literal("http_json"),
  method: HttpMethodSchema,
  path: z
    .string()
    .min(1)
    .max(2048)
    .regex(/^\/(?!\/)/, "a path starting with a single /"),
});
export type HttpJsonDescriptor = z.infer<typeof HttpJsonDescriptorSchema>;

export type ParsedDescriptor = { ok: true; descriptor: HttpJsonDescriptor } | { ok: false; outcome: Outcome };

export function parseDescriptor(value: unknown): ParsedDescriptor {
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  if (type !== "http_json") {
    const what = typeof type === "string" ? `descriptor type ${JSON.stringify(type.slice(0, 64))}` : "this descriptor";
    return unsupported(`an HTTP Environment interprets http_json descriptors, not ${what}`);
  }
  const parsed = HttpJsonDescriptorSchema.safeParse(value);
  if (!parsed.success) {
    const issues = issuesText(parsed.error, { root: "descriptor" });
    return unsupported(`malformed http_json descriptor (${issues})`);
  }
  return { ok: true, descriptor: parsed.data };
}

function unsupported(message: string): ParsedDescriptor {
  return { ok: false, outcome: errorOutcome("setup_failed", `unsupported runtime: ${message}`.slice(0, 8192)) };
}
