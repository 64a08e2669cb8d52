import { z } from "zod";

/** Settings every Brain process (server or worker) reads the same way from its environment. */
export const SharedEnvSchema = z.object({
  BRAIN_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,47}$/, "lower-case letters, digits and _")
    .default("brain"),
  BRAIN_MAX_EMITTED_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  BRAIN_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** Validates an environment once, in an entry point; the error names every bad variable. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${problems}`);
  }
  return result.data;
}
