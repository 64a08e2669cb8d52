import type { ToolPlacement } from "@aexhq/brain-contracts";
import type { Egress } from "@aexhq/brain-core/egress";
import type { ToolModelCalls } from "@aexhq/brain-core/models";
import type { Sql } from "@aexhq/brain-db/connect";
import type { ClaimedWorkerCall } from "@aexhq/brain-db/ops";
import type { InvocationSigner, SecretBox } from "@aexhq/brain-db/secrets";
import type { JournalWriter, PendingRepairs } from "@aexhq/brain-db/writer";
import type { CallReporter } from "../call-reporter.js";
import type { ComponentCache } from "../component-cache.js";
import type { Logger } from "../log.js";
import type { RunningCall, RunningCalls } from "../running-calls.js";
import type { ComponentLimits } from "../sandbox/limits.js";
import type { SparePool } from "../spare-threads.js";

/** What a worker job runs with (see invocation.ts); drivers get it with their call. */
export interface InvocationDeps {
  sql: Sql;
  writer: JournalWriter;
  cache: ComponentCache;
  running: RunningCalls;
  spares: SparePool;
  /** The connection this worker's claims go on (it changes if the worker had to re-register). */
  connectionId(): string;
  maxEmittedBytes: number;
  /** Model calls per activation (BRAIN_MAX_MODEL_CALLS), shared with the Agentloop. */
  maxModelCalls: number;
  /** Opens session secrets: Environment headers, the provider key for components' model calls. */
  secrets: SecretBox;
  /** Signs the invocations it POSTs to applications' tool handlers. */
  signer: Pick<InvocationSigner, "sign">;
  /** Model calls of the calls it runs (components' `model` import). */
  models: ToolModelCalls;
  /** This worker's id in `servers`. */
  workerId(): string;
  /** Journal writes retried each heartbeat until the database takes them (see PendingRepairs). */
  repairs?: PendingRepairs;
  log: Logger;
  /** Told of each report's emitted bytes (the worker's metrics), when it has metrics. */
  emitted?: (report: string, bytes: number) => void;
  /** How long a component still running after its call ended gets to return before it is stopped. */
  afterEndGraceMs: number;
  /** What one component call may take: its memory (capped in the cache's modules) and CPU time. */
  limits: ComponentLimits;
  /** Every request to a tenant-chosen address goes through it (HTTP tools and Environments, MCP). */
  egress: Pick<Egress, "exchange" | "fetch">;
  /** The cap on an MCP server's answer (BRAIN_MAX_UPSTREAM_BYTES). */
  maxUpstreamBytes: number;
}

/**
 * One claimed call in the hands of the driver of its Environment. The driver runs it and reports
 * through `reporter` (results, finish, failures: the same journal rules a host's frames get). It
 * returns once the call's work is over; if `running.stopped` is set (deadline, ended elsewhere,
 * shutdown) someone else records the end, and `running.signal` is aborted.
 */
export interface DriverCall {
  deps: InvocationDeps;
  claimed: ClaimedWorkerCall;
  placement: ToolPlacement;
  reporter: CallReporter;
  running: RunningCall;
  log: Logger;
}

export type Driver = (call: DriverCall) => Promise<void>;
