import { z } from "zod";
import { TOOL_NAME_PATTERN } from "./journal.js";

/**
 * The journal console's read routes (`/v1/console/*`, operator only): queries and answers. The
 * console's timeline needs no route of its own: it reads the session's event stream.
 */

const Uuid = z.uuid();
/**
 * An instant with its offset (`2026-12-01T02:00:00Z`, `…+01:00`): never a local time. Year 0000
 * is valid ISO 8601 but not a Postgres timestamp: refused here, not by the database.
 */
const Instant = z.iso
  .datetime({ offset: true })
  .refine((v) => !v.startsWith("0000-") && Number.isFinite(Date.parse(v)), "not a representable instant");
const Limit = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);
const Flag = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1")
  .optional();

export const ConsoleSessionsQuerySchema = z.strictObject({
  status: z.enum(["active", "ended"]).optional(),
  /** Sessions that have a tool of this name. */
  tool: z.string().regex(TOOL_NAME_PATTERN).optional(),
  /** Created at or after this instant. */
  since: Instant.optional(),
  /** Created before this instant (the next older page: the last row's createdAt). */
  until: Instant.optional(),
  limit: Limit(50, 200),
});

export const ConsoleSessionSchema = z.object({
  id: Uuid,
  status: z.enum(["active", "ended"]),
  hostId: Uuid.nullable(),
  tools: z.array(z.string()),
  lastSequence: z.number().int(),
  metadata: z.record(z.string(), z.string()),
  /** The application token that created it, by name; null for the operator's. */
  application: z.string().nullable(),
  /** Tool calls not yet ended. */
  openCalls: z.number().int(),
  createdAt: z.string(),
  /** When its last record was written. */
  lastRecordAt: z.string().nullable(),
  endedAt: z.string().nullable(),
});

export const ConsoleSessionListSchema = z.object({ sessions: z.array(ConsoleSessionSchema) });

export const ConsoleCallsQuerySchema = z.strictObject({
  /** Only calls not ended (oldest first); otherwise the most recent calls, ended or not. */
  open: Flag,
  tool: z.string().regex(TOOL_NAME_PATTERN).optional(),
  session: Uuid.optional(),
  limit: Limit(100, 500),
});

export const ConsoleCallSchema = z.object({
  sessionId: Uuid,
  /** The seq of its tool_call_started record. */
  sequence: z.number().int(),
  tool: z.string(),
  status: z.enum(["pending", "running", "returned", "ended"]),
  /** Where it runs: a host, a worker (components, HTTP Environments, HTTP tools), or none (ended at once). */
  executor: z.enum(["host", "worker", "none"]),
  hostId: Uuid.nullable(),
  /** The terminal outcome's status once ended, else null. */
  outcome: z.string().nullable(),
  errorCode: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  deadlineAt: z.string().nullable(),
  /** From its start to its end, or to now (the database's clock) while open. */
  elapsedMs: z.number(),
});

export const ConsoleCallListSchema = z.object({ calls: z.array(ConsoleCallSchema) });

export const ConsoleListQuerySchema = z.strictObject({ limit: Limit(100, 500) });

export const ConsoleHostSchema = z.object({
  id: Uuid,
  name: z.string().nullable(),
  /** A named host, served by replicas. */
  named: z.boolean(),
  application: z.string().nullable(),
  createdAt: z.string(),
  lastConnectedAt: z.string().nullable(),
  /** Its open WebSockets (a named host's: one per connected replica). */
  connections: z.number().int(),
  replicas: z.number().int(),
  /** Calls waiting for a connection, and calls running on its connections. */
  pendingCalls: z.number().int(),
  runningCalls: z.number().int(),
});

export const ConsoleHostListSchema = z.object({ hosts: z.array(ConsoleHostSchema) });

export const ConsoleProcessSchema = z.object({
  id: Uuid,
  kind: z.enum(["server", "worker"]),
  /** A server's callback URL, when it published one. */
  url: z.string().nullable(),
  /** live: heartbeating; silent: not heard from lately (others will declare it dead); stopped. */
  state: z.enum(["live", "silent", "stopped"]),
  startedAt: z.string(),
  heartbeatAt: z.string(),
  /** By the database's clock. */
  heartbeatAgeMs: z.number(),
  stoppedAt: z.string().nullable(),
  /** Open connections it holds: host sockets on a server, its own on a worker. */
  connections: z.number().int(),
  runningCalls: z.number().int(),
});

export const ConsoleProcessListSchema = z.object({ processes: z.array(ConsoleProcessSchema) });

export type ConsoleSessionsQuery = z.infer<typeof ConsoleSessionsQuerySchema>;
export type ConsoleSession = z.infer<typeof ConsoleSessionSchema>;
export type ConsoleCallsQuery = z.infer<typeof ConsoleCallsQuerySchema>;
export type ConsoleCall = z.infer<typeof ConsoleCallSchema>;
export type ConsoleHost = z.infer<typeof ConsoleHostSchema>;
export type ConsoleProcess = z.infer<typeof ConsoleProcessSchema>;
