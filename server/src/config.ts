import { type EgressConfig, EgressEnvSchema, egressConfig } from "@aexhq/brain-core/egress";
import { DatabaseUrlSchema, parseEnv, resolveSecretKeys, SharedEnvSchema } from "@aexhq/brain-db/connect";
import { z } from "zod";
import type { QuotaDefaults } from "./quotas.js";
import { TraceEnvSchema, type TraceExportConfig, traceExportConfig } from "./traces/otlp-config.js";

/**
 * Server configuration, read once from the environment by the entry point and validated here.
 * Nothing else in the server reads process.env.
 */
const Port = z.coerce.number().int().min(0).max(65535);

export const ConfigSchema = SharedEnvSchema.extend({
  DATABASE_URL: DatabaseUrlSchema.optional(),
  BRAIN_HOST: z.string().min(1).default("127.0.0.1"),
  BRAIN_PORT: Port.default(3210),
  BRAIN_API_TOKEN: z.string().min(16, "at least 16 characters").optional(),
  /**
   * An operator's cap on every tool call's run, in seconds; 0 (the default) = no cap. Deadlines
   * belong to callers (the tool's timeoutMs, the session's and the turn's): background tools may
   * legitimately run for hours, so a server-wide default would cut them off.
   */
  BRAIN_MAX_TOOL_SECS: z.coerce.number().min(0).default(0),
  BRAIN_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  BRAIN_WAKE_WINDOW_MS: z.coerce.number().min(0).max(1_000).default(5),
  /** An event-stream reader that accepts no bytes for this long, with bytes waiting, is dropped. */
  BRAIN_STREAM_STALL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /**
   * A session whose Agentloop has had nothing to do for this long (no turn, no open call, nothing
   * queued) lets go of its in-memory state; the next message or observation rebuilds it from the
   * journal. 0 keeps every session's state for as long as this server runs it.
   */
  BRAIN_SESSION_IDLE_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  /** Model calls per activation: the Agentloop's and its tools' together, also after it returned. */
  BRAIN_MAX_MODEL_CALLS: z.coerce.number().int().min(1).max(100_000).default(100),
  /** Where tools served over HTTP send their callbacks; default: the address the server listens on. */
  BRAIN_PUBLIC_URL: z.string().url().optional(),
  /** Ended sessions (and stopped servers, closed connections, unused components) older than this many days are deleted; 0 keeps everything. */
  BRAIN_RETENTION_DAYS: z.coerce.number().min(0).max(36_500).default(30),
  /** Grants Environments may ask for, comma-separated (`workspace:read`, `workspace:write`). */
  /** Default quotas of application tokens without their own (unset: none). */
  BRAIN_QUOTA_SESSIONS: z.coerce.number().int().min(0).optional(),
  BRAIN_QUOTA_HOSTS: z.coerce.number().int().min(0).optional(),
  BRAIN_QUOTA_OPEN_CALLS: z.coerce.number().int().min(0).optional(),
  BRAIN_QUOTA_COMPONENT_MB: z.coerce.number().min(0).optional(),
  BRAIN_ALLOWED_GRANTS: z
    .string()
    .regex(/^(workspace:(read|write))?(,workspace:(read|write))*$/, "a comma list of workspace:read / workspace:write")
    .default("workspace:read"),
})
  .extend(TraceEnvSchema.shape)
  .extend(EgressEnvSchema.shape);

export type Env = z.input<typeof ConfigSchema>;

/**
 * A server others can reach needs secrets of its own choosing: a generated operator token would be
 * printed to whoever reads its output, and a generated key would differ on every replica (each
 * unable to open the others' secrets). Loopback is the development default; anything else must set
 * both.
 */
function requireExplicitSecrets(c: z.output<typeof ConfigSchema>): void {
  if (isLoopback(c.BRAIN_HOST)) return;
  const missing = [!c.BRAIN_API_TOKEN && "BRAIN_API_TOKEN", !c.BRAIN_SECRET_KEY && "BRAIN_SECRET_KEY"].filter(Boolean);
  if (missing.length === 0) return;
  throw new Error(
    `invalid configuration: BRAIN_HOST=${c.BRAIN_HOST} listens beyond loopback, so ${missing.join(" and ")} must be set (nothing is generated for a server others can reach)`,
  );
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export interface Config {
  databaseUrl: string | undefined;
  /** BRAIN_DATABASE_PASSWORD_FILE: read for each new connection. */
  databasePasswordFile?: string;
  /** BRAIN_DIRECT_URL: a direct connection beside a pooled DATABASE_URL. */
  directUrl?: string;
  /** BRAIN_READ_URL: a replica for reads that may lag (the console, event streams' backlog). */
  readUrl?: string;
  schema: string;
  host: string;
  port: number;
  apiToken: string | undefined;
  dataDir: string;
  /** BRAIN_MAX_TOOL_SECS in ms; 0 = no cap. */
  maxToolMs: number;
  maxEmittedBytes: number;
  heartbeatMs: number;
  wakeWindowMs: number;
  streamStallMs: number;
  /** BRAIN_SESSION_IDLE_MS; 0 = never let an idle session's state go. */
  sessionIdleMs: number;
  logLevel: string;
  allowedGrants: ReadonlySet<string>;
  maxModelCalls: number;
  publicUrl: string | undefined;
  /** BRAIN_RETENTION_DAYS; 0 = keep forever. */
  retentionDays: number;
  /** The key ring for secrets at rest, the sealing key first (BRAIN_SECRET_KEY, or the generated dev key). */
  secretKeys: Buffer[];
  /** BRAIN_METRICS: who may read GET /metrics, or no metrics. */
  metrics: "token" | "open" | "off";
  /** OpenTelemetry trace export (the standard OTEL_EXPORTER_OTLP_* variables); null: off. */
  traces: TraceExportConfig | null;
  /** What Brain may reach of the addresses tenants name (BRAIN_EGRESS_ALLOW, BRAIN_EGRESS_PROXY). */
  egress: EgressConfig;
  /** BRAIN_MAX_UPSTREAM_BYTES: the most a model provider or MCP server may answer at once. */
  maxUpstreamBytes: number;
  /** BRAIN_QUOTA_*: the quotas of application tokens that have none of their own; null: none. */
  quotas: QuotaDefaults;
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const c = parseEnv(ConfigSchema, env);
  requireExplicitSecrets(c);
  if (c.BRAIN_DIRECT_URL && !c.DATABASE_URL)
    throw new Error(
      "invalid configuration: BRAIN_DIRECT_URL is set without DATABASE_URL (it goes beside a pooled one)",
    );
  if (c.BRAIN_READ_URL && !c.DATABASE_URL)
    throw new Error("invalid configuration: BRAIN_READ_URL is set without DATABASE_URL (it names a replica of it)");
  return {
    databaseUrl: c.DATABASE_URL,
    ...(c.BRAIN_DATABASE_PASSWORD_FILE ? { databasePasswordFile: c.BRAIN_DATABASE_PASSWORD_FILE } : {}),
    ...(c.BRAIN_DIRECT_URL ? { directUrl: c.BRAIN_DIRECT_URL } : {}),
    ...(c.BRAIN_READ_URL ? { readUrl: c.BRAIN_READ_URL } : {}),
    schema: c.BRAIN_SCHEMA,
    host: c.BRAIN_HOST,
    port: c.BRAIN_PORT,
    apiToken: c.BRAIN_API_TOKEN,
    dataDir: c.BRAIN_DATA_DIR,
    maxToolMs: c.BRAIN_MAX_TOOL_SECS * 1000,
    maxEmittedBytes: c.BRAIN_MAX_EMITTED_BYTES,
    heartbeatMs: c.BRAIN_HEARTBEAT_MS,
    wakeWindowMs: c.BRAIN_WAKE_WINDOW_MS,
    streamStallMs: c.BRAIN_STREAM_STALL_MS,
    sessionIdleMs: c.BRAIN_SESSION_IDLE_MS,
    logLevel: c.BRAIN_LOG_LEVEL,
    allowedGrants: new Set(c.BRAIN_ALLOWED_GRANTS.split(",").filter(Boolean)),
    maxModelCalls: c.BRAIN_MAX_MODEL_CALLS,
    publicUrl: c.BRAIN_PUBLIC_URL,
    retentionDays: c.BRAIN_RETENTION_DAYS,
    secretKeys: resolveSecretKeys(c),
    metrics: c.BRAIN_METRICS,
    traces: traceExportConfig(c),
    // No DATABASE_URL: the embedded development default, where loopback is open unless set.
    egress: egressConfig(c, c.DATABASE_URL === undefined),
    maxUpstreamBytes: c.BRAIN_MAX_UPSTREAM_BYTES,
    quotas: {
      sessions: c.BRAIN_QUOTA_SESSIONS ?? null,
      hosts: c.BRAIN_QUOTA_HOSTS ?? null,
      openCalls: c.BRAIN_QUOTA_OPEN_CALLS ?? null,
      componentBytes:
        c.BRAIN_QUOTA_COMPONENT_MB === undefined ? null : Math.round(c.BRAIN_QUOTA_COMPONENT_MB * 1024 * 1024),
    },
  };
}
