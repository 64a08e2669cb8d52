/**
 * The services of a server process as the modules that use them see them. Each module takes
 * `Pick<Services, …>` of the few fields it uses; runtime.ts alone builds the services and wires
 * them together. This module is a leaf: it names types of the database package and of modules
 * that take no services (bus, config, registry, deadline jobs, turns, tool model calls), never
 * one that does, so no import circle runs through it. The two services that do take services,
 * the dispatcher and the actors, appear here as the interfaces their users call.
 */

import type { Egress } from "@aexhq/brain-core/egress";
import type { ModelToolCall, ProviderTransport, ToolModelCalls } from "@aexhq/brain-core/models";
import type { DatabaseAvailability, Sql } from "@aexhq/brain-db/connect";
import type { Appended, Judgement, NewRecord } from "@aexhq/brain-db/ops";
import type { SecretBox } from "@aexhq/brain-db/secrets";
import type { JournalWriter, PendingRepairs } from "@aexhq/brain-db/writer";
import type { FastifyBaseLogger } from "fastify";
import type { PgBoss } from "pg-boss";
import type { CommitBus } from "./bus.js";
import type { Config } from "./config.js";
import type { HostLink } from "./hosts/link.js";
import type { HostRegistry } from "./hosts/registry.js";
import type { LiveText } from "./live-text.js";
import type { Liveness } from "./liveness.js";
import type { DeadlineJobs } from "./loop/deadline-jobs.js";
import type { RoutedSession, SessionInfo } from "./loop/session-info.js";
import type { TurnNotices } from "./loop/turns.js";
import type { McpCall } from "./mcp/mcp-call.js";
import type { Metrics } from "./metrics/sink.js";
import type { Quotas } from "./quotas.js";

/** Routes tool calls to hosts (hosts/dispatch.ts). */
export interface CallDispatch {
  /** tool_call_started records for a model response, each with its routing and deadline. */
  plan(
    session: SessionInfo,
    activation: number,
    toolCalls: ModelToolCall[],
    caller: number | null,
    room?: number,
  ): NewRecord[];
  /** The tool_call_started record of a call an MCP client makes, routed like the model's. */
  planMcp(session: RoutedSession, call: McpCall, caller: number | null, room?: number): NewRecord;
  /** Sends what a commit dispatched, and refuses calls to tools the session does not have. */
  afterCommit(sessionId: string, written: Appended[], records: NewRecord[]): Promise<void>;
  /** Sends the invoke frames a commit dispatched to this process's connections (sendCommitted). */
  sendCommitted(sessionId: string, written: Appended[], records: NewRecord[]): void;
  /** Ends the calls of a commit routed to nobody: unknown tools, calls past the open-calls quota. */
  refuseUnrouted(sessionId: string, written: Appended[], records: NewRecord[]): Promise<void>;
  /** Claims and sends a host's pending calls on one of its connections. */
  claimFor(conn: HostLink, only?: string[]): Promise<void>;
}

/** The sessions whose Agentloop runs here (loop/actors.ts), as recovery sees them. */
export interface SessionResumer {
  /**
   * Claims the session and runs its actor here, unless another live server owns it.
   * `parkWhenIdle`: nothing woke it here, so it parks as soon as it has nothing to do.
   */
  resume(sessionId: string, options?: { parkWhenIdle?: boolean }): Promise<unknown>;
  /** Of `ids`, owns parked (one statement) those parked with nothing since and free; their ids. */
  resumeParked(ids: readonly string[], judge: Judgement): Promise<Set<string>>;
  /** A session created here (owned, no Agentloop yet): parked at `lastSeq`. */
  created(sessionId: string, lastSeq: number): void;
}

export interface Services {
  readonly serverId: string;
  /**
   * Brain's tables are distributed on a Citus cluster (db/src/citus.ts): the writer gives every
   * write a statement of its own, and a claim of many sessions locks none ahead (ownership.ts).
   */
  readonly distributed: boolean;
  readonly config: Config;
  readonly sql: Sql;
  /**
   * Reads that may lag: a replica's pool with BRAIN_READ_URL, else `sql`. Never written to; what
   * must be current (a stream's live tail, anything before a write) reads `sql`.
   */
  readonly readSql: Sql;
  readonly writer: JournalWriter;
  readonly bus: CommitBus;
  readonly hosts: HostRegistry;
  readonly dispatch: CallDispatch;
  readonly actors: SessionResumer;
  readonly deadlineJobs: DeadlineJobs;
  readonly boss: PgBoss;
  readonly log: FastifyBaseLogger;
  /** Seals and opens session secrets (provider keys, Environment headers) under BRAIN_SECRET_KEY. */
  readonly secrets: SecretBox;
  /** Model calls of the tools whose host connections are on this server (ctx.model). */
  readonly toolModels: Pick<ToolModelCalls, "call">;
  /** Ended activations, announced in-process by the actors that wrote them. */
  readonly turns: TurnNotices;
  /** Aborted when the server starts shutting down: requests waiting on a turn give up. */
  readonly closing: AbortSignal;
  /** Whether the database answers; requests fail fast with `database_unavailable` while it does not. */
  readonly availability: DatabaseAvailability;
  /** What this server may conclude from other servers' heartbeats (after an outage, not yet all). */
  readonly liveness: Pick<Liveness, "verdicts" | "judgement">;
  /** Writes that failed while the database was away and must still happen (retried each heartbeat). */
  readonly repairs: PendingRepairs;
  /** In-process counters (metrics/sink.ts); no-ops with BRAIN_METRICS=off. */
  readonly metrics: Metrics;
  /** Every request to a tenant-chosen address goes through it (BRAIN_EGRESS_ALLOW). */
  readonly egress: Pick<Egress, "exchange" | "fetch" | "preflight">;
  /** How model providers reach the network: the egress guard's fetch and the answer cap. */
  readonly modelTransport: ProviderTransport;
  /** Models' text as it streams, to every server's live followers (live-text.ts); never journaled. */
  readonly live: LiveText;
  /** Quotas of application tokens (sessions, hosts, open calls, component bytes). */
  readonly quotas: Pick<Quotas, "guard" | "openCallRoom" | "forget">;
}
