import type { FlushInfo } from "@aexhq/brain-db/writer";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { JobResult } from "./invocation.js";

/**
 * The worker's metrics, in a registry of its own (a process may run a worker beside a server, as
 * `npm start` does, and each serves only its own), served on its health port at /metrics.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly jobs: Counter<"outcome" | "env">;
  private readonly seconds: Histogram<"outcome" | "env">;
  private readonly commits: Counter;
  private readonly writes: Counter;
  private readonly emittedBytes: Counter<"report">;

  constructor(running: () => number, options: { defaults?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaults !== false) collectDefaultMetrics({ register: this.registry });
    this.jobs = new Counter({
      name: "brain_worker_jobs_total",
      help: "Worker jobs handled, by outcome (ran, not_pending, expired, failed, malformed) and environment type.",
      labelNames: ["outcome", "env"],
      registers,
    });
    this.seconds = new Histogram({
      name: "brain_worker_job_duration_seconds",
      help: "From a job's claim by this worker to the end of its handling, by outcome and environment type.",
      labelNames: ["outcome", "env"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.commits = new Counter({
      name: "brain_journal_commits_total",
      help: "Batches the worker's journal writer committed.",
      registers,
    });
    this.writes = new Counter({
      name: "brain_journal_writes_total",
      help: "Writes the worker's journal writer committed.",
      registers,
    });
    this.emittedBytes = new Counter({
      name: "brain_emitted_bytes_total",
      help: "Bytes of reports of the calls this worker runs (what BRAIN_MAX_EMITTED_BYTES counts), by report.",
      labelNames: ["report"],
      registers,
    });
    new Gauge({
      name: "brain_worker_running_calls",
      help: "Calls running in this worker now.",
      registers,
      collect() {
        this.set(running());
      },
    });
  }

  /** One job handled, `ms` after it was handed to this worker. */
  job(result: JobResult | { outcome: "failed" | "malformed"; env: null }, ms: number): void {
    const labels = { outcome: result.outcome, env: result.env ?? "none" };
    this.jobs.inc(labels);
    this.seconds.observe(labels, ms / 1000);
  }

  emitted(report: string, bytes: number): void {
    if (bytes > 0) this.emittedBytes.inc({ report }, bytes);
  }

  flushed(flush: FlushInfo): void {
    this.commits.inc();
    this.writes.inc(flush.writes);
  }
}
