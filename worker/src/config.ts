import { type EgressConfig, EgressEnvSchema, egressConfig } from "@aexhq/brain-core/egress";
import { DatabaseUrlSchema, parseEnv, resolveSecretKeys, SharedEnvSchema } from "@aexhq/brain-db/connect";
import { z } from "zod";
import type { ComponentLimits } from "./sandbox/limits.js";

/**
 * Worker configuration, read once from the environment by the entry point (or a launcher that
 * runs a worker beside a server) and validated here. Nothing else in the worker reads process.env.
 */
export const WorkerConfigSchema = SharedEnvSchema.extend({
  DATABASE_URL: z
    .string({ message: "DATABASE_URL is required: the worker needs only the database" })
    .pipe(DatabaseUrlSchema),
  BRAIN_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /**
   * Of those, how many one application token's calls may hold at once (the operator's sessions
   * count as one more owner); default: all but one, so one tenant's flood never takes them all.
   */
  BRAIN_WORKER_TOKEN_SLOTS: z.coerce.number().int().min(1).max(256).optional(),
  BRAIN_WORKER_CACHE_DIR: z.string().min(1).default(".brain/component-cache"),
  /** Must match the servers': model calls of components share the activation's budget. */
  BRAIN_MAX_MODEL_CALLS: z.coerce.number().int().min(1).max(100_000).default(100),
  /** Off unless set: a small HTTP server with /healthz and /readyz (0 picks a free port). */
  BRAIN_WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  BRAIN_WORKER_HEALTH_HOST: z.string().min(1).default("127.0.0.1"),
  /** The linear memory of one component instance, in MiB. */
  BRAIN_COMPONENT_MEMORY_MB: z.coerce.number().int().min(16).max(4096).default(256),
  /** The CPU time one component call may use, in seconds; 0: no bound. */
  BRAIN_COMPONENT_CPU_SECONDS: z.coerce.number().min(0).max(86_400).default(300),
}).extend(EgressEnvSchema.shape);

export interface WorkerConfig {
  databaseUrl: string;
  /** BRAIN_DATABASE_PASSWORD_FILE: read for each new connection. */
  databasePasswordFile?: string;
  /** BRAIN_DIRECT_URL: a direct connection beside a pooled DATABASE_URL. */
  directUrl?: string;
  schema: string;
  /** Per-activation budget of extension events and results; must match the servers'. */
  maxEmittedBytes: number;
  /** Component invocations run at once by this worker. */
  concurrency: number;
  /** Of `concurrency`, the most one owner's calls hold at once (default: all but one). */
  tokenSlots?: number;
  /** Transpiled components, one directory per content hash. */
  cacheDir: string;
  logLevel: string;
  maxModelCalls: number;
  /** Opens the session secrets that model calls and HTTP Environments need (same key as the servers). */
  secretKeys: Buffer[];
  /** Whether the health port also serves /metrics (default true; false with BRAIN_METRICS=off). */
  metrics?: boolean;
  /** Where the worker's /healthz and /readyz listen; no probes when undefined. */
  health?: { host: string; port: number };
  /**
   * After its call ended, how long a component still running gets to return before it is stopped
   * (default 1000 ms): what it does then is refused (`call_ended`), but its own clean-up may finish.
   */
  afterEndGraceMs?: number;
  /** What the worker may reach of the addresses tenants name (BRAIN_EGRESS_ALLOW, BRAIN_EGRESS_PROXY). */
  egress: EgressConfig;
  /** BRAIN_MAX_UPSTREAM_BYTES: the most an MCP server or model provider may answer at once. */
  maxUpstreamBytes: number;
  /** What one component call may take (BRAIN_COMPONENT_MEMORY_MB, BRAIN_COMPONENT_CPU_SECONDS); defaults apply when absent. */
  componentLimits?: ComponentLimits;
}

export function parseWorkerConfig(env: Record<string, string | undefined>): WorkerConfig {
  const c = parseEnv(WorkerConfigSchema, env);
  return {
    databaseUrl: c.DATABASE_URL,
    ...(c.BRAIN_DATABASE_PASSWORD_FILE ? { databasePasswordFile: c.BRAIN_DATABASE_PASSWORD_FILE } : {}),
    ...(c.BRAIN_DIRECT_URL ? { directUrl: c.BRAIN_DIRECT_URL } : {}),
    schema: c.BRAIN_SCHEMA,
    maxEmittedBytes: c.BRAIN_MAX_EMITTED_BYTES,
    concurrency: c.BRAIN_WORKER_CONCURRENCY,
    ...(c.BRAIN_WORKER_TOKEN_SLOTS === undefined ? {} : { tokenSlots: c.BRAIN_WORKER_TOKEN_SLOTS }),
    cacheDir: c.BRAIN_WORKER_CACHE_DIR,
    logLevel: c.BRAIN_LOG_LEVEL,
    maxModelCalls: c.BRAIN_MAX_MODEL_CALLS,
    secretKeys: resolveSecretKeys(c),
    metrics: c.BRAIN_METRICS !== "off",
    // A worker always has a database of its own naming: loopback is open only where set.
    egress: egressConfig(c, false),
    maxUpstreamBytes: c.BRAIN_MAX_UPSTREAM_BYTES,
    componentLimits: {
      memoryBytes: c.BRAIN_COMPONENT_MEMORY_MB * 1024 * 1024,
      cpuMs: Math.round(c.BRAIN_COMPONENT_CPU_SECONDS * 1000),
    },
    ...(c.BRAIN_WORKER_HEALTH_PORT === undefined
      ? {}
      : { health: { host: c.BRAIN_WORKER_HEALTH_HOST, port: c.BRAIN_WORKER_HEALTH_PORT } }),
  };
}
