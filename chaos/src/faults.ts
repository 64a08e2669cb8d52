// The fault injector: at random points (seeded), one fault at a time. Killed processes stay down
// for a random moment and are then started again by the supervisor (restarted servers keep their
// port, so hosts and clients reconnect to them).
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import type { FaultKind, LoggedFault } from "./args.js";
import type { Cluster } from "./cluster.js";
import type { Managed } from "./processes.js";
import { Rng } from "./rng.js";
import type { Supervisor } from "./supervisor.js";

export interface FaultLog {
  /** Seconds since the run started. */
  at: number;
  kind: LoggedFault;
  detail: string;
  error?: string;
}

export interface FaultTargets {
  cluster: Cluster;
  servers: Managed[];
  workers: Managed[];
  hosts: Managed[];
  supervisor: Supervisor;
}

export class Faults {
  readonly log: FaultLog[] = [];

  constructor(
    private readonly rng: Rng,
    private readonly kinds: FaultKind[],
    private readonly targets: FaultTargets,
    private readonly elapsed: () => number,
    private readonly say: (line: string) => void,
  ) {}

  /**
   * Injects faults until `until` (ms since the epoch), `gapMs` apart; `failover`, once, the first
   * time its moment has come.
   */
  async run(until: number, gapMs: [number, number], failover?: { at: number; run(): Promise<string> }): Promise<void> {
    let pending = failover;
    if (this.kinds.length === 0 && !pending) return;
    while (Date.now() < until) {
      await sleep(this.rng.int(gapMs[0], gapMs[1]));
      if (Date.now() >= until) break;
      if (pending && Date.now() >= pending.at) {
        await this.record("pg_failover", () => pending!.run());
        pending = undefined;
        continue;
      }
      if (this.kinds.length === 0) continue;
      const kind = this.rng.pick(this.kinds);
      // The fault's own choices come from a generator of its own, so a choice that depends on
      // the run (how many backends there are) does not shift the rest of the schedule.
      const own = new Rng(this.rng.int(0, 2 ** 31 - 1));
      await this.record(kind, () => this.inject(kind, own));
    }
  }

  private async record(kind: LoggedFault, inject: () => Promise<string>): Promise<void> {
    const entry: FaultLog = { at: this.elapsed(), kind, detail: "" };
    this.log.push(entry);
    try {
      entry.detail = await inject();
    } catch (error) {
      entry.error = (error as Error).message.split("\n")[0];
    }
    this.say(`fault ${kind}: ${entry.error ? `failed: ${entry.error}` : entry.detail}`);
  }

  private async inject(kind: FaultKind, rng: Rng): Promise<string> {
    const { cluster, servers, workers, hosts, supervisor } = this.targets;
    switch (kind) {
      case "server_kill":
        return this.killFor(rng.pick(servers), supervisor, rng);
      case "worker_kill":
        return this.killFor(rng.pick(workers), supervisor, rng);
      case "host_kill":
        return this.killFor(rng.pick(hosts), supervisor, rng);
      case "pg_restart_fast":
      case "pg_restart_immediate": {
        const started = Date.now();
        await cluster.restart(kind === "pg_restart_fast" ? "fast" : "immediate");
        return `down ${Date.now() - started} ms`;
      }
      case "pg_terminate_backends":
        return terminateBackends(cluster.url, rng.next() < 0.5 ? "all" : "half", rng);
    }
  }

  /** SIGKILL, held down 0.3–3 s, then the supervisor starts it again. */
  private async killFor(target: Managed, supervisor: Supervisor, rng: Rng): Promise<string> {
    const down = rng.int(300, 3_000);
    supervisor.hold(target);
    const pid = target.pid;
    await target.kill("SIGKILL");
    await sleep(down);
    supervisor.release(target);
    return `${target.name} (pid ${pid}) down ${down} ms`;
  }
}

/** pg_terminate_backend on Brain's connections (every client backend but this one), or on about half of them. */
async function terminateBackends(url: string, which: "all" | "half", rng: Rng): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const rows = await sql<{ pid: number; application_name: string }[]>`
      SELECT pid, application_name FROM pg_stat_activity
      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`;
    const chosen = which === "all" ? rows : rows.filter(() => rng.next() < 0.5);
    // The cast picks Postgres's function: Citus adds one of its own for global process ids.
    for (const { pid } of chosen) await sql`SELECT pg_terminate_backend(${pid}::int)`;
    return `${chosen.length} of ${rows.length} backends`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}
