import type { FlushInfo } from "@aexhq/brain-db/writer";

/**
 * What the server's modules tell its metrics, on their hot paths: in-process counts only, never a
 * query. A module takes `Pick<Services, "metrics">` and calls these; with BRAIN_METRICS=off they
 * are no-ops. The Prometheus side (prometheus.ts) is the only importer of prom-client.
 */
export interface Metrics {
  /**
   * A journal record the session's Agentloop folded on this server as it happened (records replayed
   * when a server takes a session over were counted, if at all, where they were written). `tool`
   * names the call a record belongs to, when it belongs to one; `at` is epoch ms.
   */
  record(record: FoldedRecord): void;
  /** A wake window closed after `ms`. */
  wakeWindow(ms: number): void;
  /** A tool's report was journaled: `bytes` count against its activation's emission budget. */
  emitted(report: string, bytes: number): void;
  /** The journal writer committed a batch. */
  flushed(flush: FlushInfo): void;
  /** A NOTIFY from another process arrived on the LISTEN connection. */
  notified(): void;
  /**
   * An Agentloop caught up with its journal: only from records this process wrote and handed on
   * (`heard`), or by reading it (`read`).
   */
  caughtUp(source: "heard" | "read"): void;
}

export interface FoldedRecord {
  sessionId: string;
  seq: number;
  kind: string;
  payload: unknown;
  /** For tool_call_started and tool_call_ended: the tool's name. */
  tool?: string | undefined;
  /** For tool_call_ended: when this server saw the call start (epoch ms), if it did. */
  startedAt?: number | undefined;
  at: number;
}

export const noMetrics: Metrics = {
  record() {},
  wakeWindow() {},
  emitted() {},
  flushed() {},
  notified() {},
  caughtUp() {},
};
