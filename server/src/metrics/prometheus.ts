import { payloadOf } from "@aexhq/brain-contracts";
import type { FlushInfo } from "@aexhq/brain-db/writer";
import { collectDefaultMetrics, Registry } from "prom-client";
import { type MetricSources, registerGauges } from "./gauges.js";
import type { FoldedRecord, Metrics } from "./sink.js";
import { Tally, TallyHistogram } from "./tally.js";

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const WINDOW_SECONDS = [0.001, 0.002, 0.004, 0.006, 0.008, 0.01, 0.025, 0.05, 0.1, 0.5];
/**
 * Distinct tool labels kept; later names count as `_other`. Tool names come from sessions, and an
 * unknown tool's from the model: without a bound, a model inventing names would grow every scrape.
 */
const MAX_TOOL_LABELS = 500;
const WRITES = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const COMMIT_SECONDS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

/**
 * The server's metrics in a registry of its own (one per app, so several apps in one process,
 * as in tests, never share counters). Counters move in-process as records are folded and batches
 * commit; gauges are read from the runtime at scrape time.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly toolStarted: Tally<"tool"> = new Tally({
    name: "brain_tool_calls_started_total",
    help: "Tool calls started (tool_call_started) in sessions run here.",
    labelNames: ["tool"],
    registers: [this.registry],
  });
  private readonly toolEnded: Tally<"tool" | "status"> = new Tally({
    name: "brain_tool_calls_total",
    help: "Tool calls ended (tool_call_ended) in sessions run here, by tool and outcome status.",
    labelNames: ["tool", "status"],
    registers: [this.registry],
  });
  private readonly toolSeconds: TallyHistogram<"tool"> = new TallyHistogram(
    "brain_tool_call_duration_seconds",
    "From tool_call_started to tool_call_ended, for calls whose start this server saw.",
    SECONDS,
    this.registry,
  );
  private readonly window: TallyHistogram<never> = new TallyHistogram(
    "brain_wake_window_seconds",
    "Wake windows, from the first observation to the Agentloop's wake (BRAIN_WAKE_WINDOW_MS).",
    WINDOW_SECONDS,
    this.registry,
  );
  private readonly modelCalls: Tally<"origin" | "status"> = new Tally({
    name: "brain_model_calls_total",
    help: "Model calls ended (model_call_ended) in sessions run here, by origin (agentloop, tool) and status.",
    labelNames: ["origin", "status"],
    registers: [this.registry],
  });
  private readonly retries: Tally<"origin"> = new Tally({
    name: "brain_model_retries_total",
    help: "Model requests tried again because the provider certainly did not process them (429, 529, other 5xx, a refused connection), by origin.",
    labelNames: ["origin"],
    registers: [this.registry],
  });
  private readonly tokens: Tally<"origin" | "direction"> = new Tally({
    name: "brain_model_tokens_total",
    help: "Tokens the providers reported, by origin and direction (input, output).",
    labelNames: ["origin", "direction"],
    registers: [this.registry],
  });
  private readonly emittedBytes: Tally<"report"> = new Tally({
    name: "brain_emitted_bytes_total",
    help: "Bytes of tools' reports journaled through this server (what BRAIN_MAX_EMITTED_BYTES counts), by report.",
    labelNames: ["report"],
    registers: [this.registry],
  });
  private readonly commits: Tally<never> = new Tally({
    name: "brain_journal_commits_total",
    help: "Batches the journal writer committed.",
    registers: [this.registry],
  });
  private readonly writes: Tally<never> = new Tally({
    name: "brain_journal_writes_total",
    help: "Writes the journal writer committed.",
    registers: [this.registry],
  });
  private readonly batchWrites: TallyHistogram<never> = new TallyHistogram(
    "brain_journal_writes_per_commit",
    "Writes per committed batch (group commit).",
    WRITES,
    this.registry,
  );
  private readonly commitSeconds: TallyHistogram<never> = new TallyHistogram(
    "brain_journal_commit_seconds",
    "A batch's transaction, from sent to the answer of its commit.",
    COMMIT_SECONDS,
    this.registry,
  );
  private readonly notifiesSent: Tally<never> = new Tally({
    name: "brain_notifies_sent_total",
    help: "NOTIFYs sent with committed batches.",
    registers: [this.registry],
  });
  private readonly notifiesReceived: Tally<never> = new Tally({
    name: "brain_notifies_received_total",
    help: "NOTIFYs from other processes received on the LISTEN connection.",
    registers: [this.registry],
  });
  private readonly catchUps: Tally<"source"> = new Tally({
    name: "brain_agentloop_catchups_total",
    help: "Agentloop catch-ups with the journal: from records this server wrote (heard), or by reading it (read).",
    labelNames: ["source"],
    registers: [this.registry],
  });

  /** `replica`: BRAIN_READ_URL is set, and its lag is exposed. */
  constructor(sources: MetricSources, options: { defaults?: boolean; replica?: boolean } = {}) {
    if (options.defaults !== false) collectDefaultMetrics({ register: this.registry });
    registerGauges(sources, [this.registry], options.replica === true);
  }

  private readonly tools = new Set<string>();

  private toolLabel(name: string | undefined): string {
    const tool = name ?? "unknown";
    if (this.tools.has(tool)) return tool;
    if (this.tools.size >= MAX_TOOL_LABELS) return "_other";
    this.tools.add(tool);
    return tool;
  }

  record(r: FoldedRecord): void {
    switch (r.kind) {
      case "tool_call_started": {
        const tool = this.toolLabel(r.tool);
        this.toolStarted.add(tool, () => ({ tool }));
        break;
      }
      case "tool_call_ended": {
        const tool = this.toolLabel(r.tool);
        const status = payloadOf(r, "tool_call_ended")?.outcome.status ?? "unknown";
        this.toolEnded.add(`${tool}\0${status}`, () => ({ tool, status }));
        if (r.startedAt !== undefined)
          this.toolSeconds.observe(tool, () => ({ tool }), Math.max(0, r.at - r.startedAt) / 1000);
        break;
      }
      case "model_call_ended": {
        const p = payloadOf(r, "model_call_ended");
        const origin = p?.origin?.type === "tool" ? "tool" : "agentloop";
        const status = p?.outcome.status ?? "unknown";
        this.modelCalls.add(`${origin}\0${status}`, () => ({ origin, status }));
        const input = p?.usage?.inputTokens ?? 0;
        const output = p?.usage?.outputTokens ?? 0;
        if (input > 0) this.tokens.add(`${origin}\0input`, () => ({ origin, direction: "input" }), input);
        if (output > 0) this.tokens.add(`${origin}\0output`, () => ({ origin, direction: "output" }), output);
        const retried = (p?.attempts?.length ?? 1) - 1;
        if (retried > 0) this.retries.add(origin, () => ({ origin }), retried);
        break;
      }
    }
  }

  wakeWindow(ms: number): void {
    this.window.observe("", () => ({}), Math.max(0, ms) / 1000);
  }

  emitted(report: string, bytes: number): void {
    if (bytes > 0) this.emittedBytes.add(report, () => ({ report }), bytes);
  }

  flushed(flush: FlushInfo): void {
    this.commits.add("", () => ({}));
    this.writes.add("", () => ({}), flush.writes);
    this.batchWrites.observe("", () => ({}), flush.writes);
    this.commitSeconds.observe("", () => ({}), flush.ms / 1000);
    if (flush.notifies > 0) this.notifiesSent.add("", () => ({}), flush.notifies);
  }

  notified(): void {
    this.notifiesReceived.add("", () => ({}));
  }

  caughtUp(source: "heard" | "read"): void {
    this.catchUps.add(source, () => ({ source }));
  }
}
