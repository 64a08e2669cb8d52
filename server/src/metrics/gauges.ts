import { Gauge, type Registry } from "prom-client";

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

/** The gauges, read from the runtime when scraped (never on the hot path, never a query). */
export function registerGauges(sources: MetricSources, registers: Registry[], replica: boolean): void {
  new Gauge({
    name: "brain_wakeups_polling",
    help: "1 when LISTEN/NOTIFY does not deliver here (a transaction-mode pooler) and wake-ups fall back to polling.",
    registers,
    collect() {
      this.set(sources.polling() ? 1 : 0);
    },
  });
  if (replica) replicaGauges(sources, registers);
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
