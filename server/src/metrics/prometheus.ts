import { payloadOf } from "@aexhq/brain-contracts";
import type { FlushInfo } from "@aexhq/brain-db";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { FoldedRecord, Metrics } from "./sink.js";
import { Tally, TallyHistogram } from "./tally.js";

/** What the gauges read when scraped (never on the hot path, never a query). */
export interface MetricSources {
  /** The Agentloops running on this server: their sessions' calls not ended, and whether a turn runs. */
  loops(): Iterable<{ open: number; turn: boolean }>;
  /** Sessions this server owns whose idle Agentloop let go of its state (BRAIN_SESSION_IDLE_MS). */
  parked(): number;
  /** This server's host sockets: a host's or a named host replica's, with the calls sent on it and not ended. */
  connections(): Iterable<{ kind: "host" | "replica"; pending: number }>;
  /** Whether wake-ups fall back to polling (a NOTIFY sent at start never reached the LISTEN). */
  polling(): boolean;
  /** BRAIN_READ_URL's replica lag as last sampled (each heartbeat); null without one. */
  replicaLag(): { bytes: number; seconds: number } | null;
}

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
  private readonly toolStarted: Tally<"tool">;
  private readonly toolEnded: Tally<"tool" | "status">;
  private readonly toolSeconds: TallyHistogram<"tool">;
  private readonly window: TallyHistogram<never>;
  private readonly modelCalls: Tally<"origin" | "status">;
  private readonly tokens: Tally<"origin" | "direction">;
  private readonly emittedBytes: Tally<"report">;
  private readonly commits: Tally<never>;
  private readonly writes: Tally<never>;
  private readonly batchWrites: TallyHistogram<never>;
  private readonly commitSeconds: TallyHistogram<never>;
  private readonly notifiesSent: Tally<never>;
  private readonly notifiesReceived: Tally<never>;
  private readonly catchUps: Tally<"source">;

  /** `replica`: BRAIN_READ_URL is set, and its lag is exposed. */
  constructor(sources: MetricSources, options: { defaults?: boolean; replica?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaults !== false) collectDefaultMetrics({ register: this.registry });
    this.toolStarted = new Tally({
      name: "brain_tool_calls_started_total",
      help: "Tool calls started (tool_call_started) in sessions run here.",
      labelNames: ["tool"],
      registers,
    });
    this.toolEnded = new Tally({
      name: "brain_tool_calls_total",
      help: "Tool calls ended (tool_call_ended) in sessions run here, by tool and outcome status.",
      labelNames: ["tool", "status"],
      registers,
    });
    this.toolSeconds = new TallyHistogram(
      "brain_tool_call_duration_seconds",
      "From tool_call_started to tool_call_ended, for calls whose start this server saw.",
      SECONDS,
      this.registry,
    );
    this.window = new TallyHistogram(
      "brain_wake_window_seconds",
      "Wake windows, from the first observation to the Agentloop's wake (BRAIN_WAKE_WINDOW_MS).",
      WINDOW_SECONDS,
      this.registry,
    );
    this.modelCalls = new Tally({
      name: "brain_model_calls_total",
      help: "Model calls ended (model_call_ended) in sessions run here, by origin (agentloop, tool) and status.",
      labelNames: ["origin", "status"],
      registers,
    });
    this.tokens = new Tally({
      name: "brain_model_tokens_total",
      help: "Tokens the providers reported, by origin and direction (input, output).",
      labelNames: ["origin", "direction"],
      registers,
    });
    this.emittedBytes = new Tally({
      name: "brain_emitted_bytes_total",
      help: "Bytes of tools' reports journaled through this server (what BRAIN_MAX_EMITTED_BYTES counts), by report.",
      labelNames: ["report"],
      registers,
    });
    this.commits = new Tally({
      name: "brain_journal_commits_total",
      help: "Batches the journal writer committed.",
      registers,
    });
    this.writes = new Tally({
      name: "brain_journal_writes_total",
      help: "Writes the journal writer committed.",
      registers,
    });
    this.batchWrites = new TallyHistogram(
      "brain_journal_writes_per_commit",
      "Writes per committed batch (group commit).",
      WRITES,
      this.registry,
    );
    this.commitSeconds = new TallyHistogram(
      "brain_journal_commit_seconds",
      "A batch's transaction, from sent to the answer of its commit.",
      COMMIT_SECONDS,
      this.registry,
    );
    this.notifiesSent = new Tally({
      name: "brain_notifies_sent_total",
      help: "NOTIFYs sent with committed batches.",
      registers,
    });
    this.notifiesReceived = new Tally({
      name: "brain_notifies_received_total",
      help: "NOTIFYs from other processes received on the LISTEN connection.",
      registers,
    });
    this.catchUps = new Tally({
      name: "brain_agentloop_catchups_total",
      help: "Agentloop catch-ups with the journal: from records this server wrote (heard), or by reading it (read).",
      labelNames: ["source"],
      registers,
    });
    new Gauge({
      name: "brain_wakeups_polling",
      help: "1 when LISTEN/NOTIFY does not deliver here (a transaction-mode pooler) and wake-ups fall back to polling.",
      registers,
      collect() {
        this.set(sources.polling() ? 1 : 0);
      },
    });
    if (options.replica) replicaGauges(sources, registers);
    new Gauge({
      name: "brain_actors",
      help: "Agentloops resident on this server (one per active session it owns and has not parked).",
      registers,
      collect() {
        let n = 0;
        for (const _ of sources.loops()) n++;
        this.set(n);
      },
    });
    new Gauge({
      name: "brain_sessions_parked",
      help: "Active sessions this server owns whose idle Agentloop let go of its state (BRAIN_SESSION_IDLE_MS), or created here with no work yet.",
      registers,
      collect() {
        this.set(sources.parked());
      },
    });
    new Gauge({
      name: "brain_turns_running",
      help: "Sessions run here with a turn (activation) in progress.",
      registers,
      collect() {
        let n = 0;
        for (const l of sources.loops()) if (l.turn) n++;
        this.set(n);
      },
    });
    new Gauge({
      name: "brain_tool_calls_open",
      help: "Tool calls not ended in the sessions run here.",
      registers,
      collect() {
        let n = 0;
        for (const l of sources.loops()) n += l.open;
        this.set(n);
      },
    });
    new Gauge({
      name: "brain_tool_calls_pending",
      help: "Tool calls sent on this server's host connections whose end has not been seen yet.",
      registers,
      collect() {
        let n = 0;
        for (const c of sources.connections()) n += c.pending;
        this.set(n);
      },
    });
    new Gauge({
      name: "brain_host_connections",
      help: "Host WebSockets open on this server, by kind (host, replica).",
      labelNames: ["kind"],
      registers,
      collect() {
        const counts = { host: 0, replica: 0 };
        for (const c of sources.connections()) counts[c.kind]++;
        this.set({ kind: "host" }, counts.host);
        this.set({ kind: "replica" }, counts.replica);
      },
    });
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

function replicaGauges(sources: MetricSources, registers: Registry[]): void {
  new Gauge({
    name: "brain_read_replica_lag_seconds",
    help: "How old what BRAIN_READ_URL's replica shows is: 0 when it has replayed all the primary wrote (sampled each heartbeat).",
    registers,
    collect() {
      const lag = sources.replicaLag();
      if (lag) this.set(lag.seconds);
    },
  });
  new Gauge({
    name: "brain_read_replica_lag_bytes",
    help: "WAL BRAIN_READ_URL's replica has yet to replay (sampled each heartbeat).",
    registers,
    collect() {
      const lag = sources.replicaLag();
      if (lag) this.set(lag.bytes);
    },
  });
}
