import { issuesText } from "@aexhq/brain-contracts";
import { z } from "zod";
import { databaseUrlProblem } from "./connect-url.js";
import { brainSchemaProblem } from "./schema-name.js";
import { loadOrCreateDevSecretKey, parseSecretKeys } from "./secrets.js";

/** A Postgres URL: one host or several (fail-over, with `target_session_attrs`), or a Unix socket. */
export const DatabaseUrlSchema = z.string().superRefine((url, ctx) => {
  const problem = databaseUrlProblem(url);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** Settings every Brain process (server or worker) reads the same way from its environment. */
export const SharedEnvSchema = z.object({
  BRAIN_SCHEMA: z
    .string()
    .superRefine((name, ctx) => {
      const problem = brainSchemaProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .default("brain"),
  BRAIN_MAX_EMITTED_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /**
   * AES-256-GCM key ring for secrets at rest: keys of 64 hex digits (or base64 of 32 bytes),
   * comma-separated, the one that seals first; the same on every server and worker. Unset outside
   * production: one key generated once into BRAIN_DATA_DIR/secret.key.
   */
  BRAIN_SECRET_KEY: z
    .string()
    .refine((v) => parseSecretKeys(v) !== null, "keys of 64 hex digits (or base64 of 32 bytes), comma-separated")
    .optional(),
  BRAIN_DATA_DIR: z.string().min(1).default(".brain"),
  /**
   * A file holding the database password, read for every new connection (instead of the URL's):
   * a password rotated while Brain runs is used from the next connection on.
   */
  BRAIN_DATABASE_PASSWORD_FILE: z.string().min(1).optional(),
  /**
   * A direct connection to the same database, when DATABASE_URL goes through a pooler in
   * transaction mode: LISTEN and the connections Brain holds for itself (the journal writer's,
   * the prune and trace-export leases) use it; DATABASE_URL's statements are then sent unprepared.
   */
  BRAIN_DIRECT_URL: DatabaseUrlSchema.optional(),
  /**
   * A replica of the same database, for reads that may lag: the console, the CLI's listings and
   * the backlog of event streams (their live tail is read from the primary). Never written.
   */
  BRAIN_READ_URL: DatabaseUrlSchema.optional(),
  NODE_ENV: z.string().optional(),
  BRAIN_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /**
   * Prometheus metrics: a server's GET /metrics behind the operator token (`token`, the default:
   * it names tools) or `open` (a scraper on a private network); a worker's on its health port
   * unless `off`. `off` counts nothing.
   */
  BRAIN_METRICS: z.enum(["token", "open", "off"]).default("token"),
});

/** Validates an environment once, in an entry point; the error names every bad variable. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = issuesText(result.error);
    throw new Error(`invalid configuration: ${problems}`);
  }
  return result.data;
}

/**
 * The key ring a process uses: BRAIN_SECRET_KEY, or outside production the generated dev key.
 * Entry points call this once, with the parsed environment.
 */
export function resolveSecretKeys(env: {
  BRAIN_SECRET_KEY?: string;
  BRAIN_DATA_DIR: string;
  NODE_ENV?: string;
}): Buffer[] {
  if (env.BRAIN_SECRET_KEY) return parseSecretKeys(env.BRAIN_SECRET_KEY)!;
  if (env.NODE_ENV === "production") {
    throw new Error("invalid configuration: BRAIN_SECRET_KEY is required when NODE_ENV=production");
  }
  return [loadOrCreateDevSecretKey(env.BRAIN_DATA_DIR).key];
}
