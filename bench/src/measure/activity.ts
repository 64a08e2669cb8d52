import { plainSql } from "../runner/database.js";

/**
 * Samples pg_stat_activity for the Brain server's backends, its journal writer's included (or
 * other processes', by application_name) every few milliseconds while a scenario
 * measures (`--sample-activity`): the average number of its backends executing (by wait event and
 * statement), idle inside a transaction (waiting for the Node process) or idle. It costs a little
 * CPU, so it is off by default.
 */
export class ActivitySampler {
  private running: Promise<void> | null = null;
  private stopping = false;
  private counts = new Map<string, number>();
  private samples = 0;

  constructor(
    private readonly url: string,
    private readonly database: string,
    private readonly applications: readonly string[] = ["brain-server", "brain-writer"],
    private readonly everyMs = 5,
  ) {}

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.counts.clear();
    this.samples = 0;
    this.running = this.loop();
  }

  async stop(): Promise<Record<string, number>> {
    this.stopping = true;
    await this.running;
    this.running = null;
    const out: Record<string, number> = {};
    for (const [k, n] of [...this.counts].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
      out[k] = Math.round((n / Math.max(1, this.samples)) * 1000) / 1000;
    }
    return out;
  }

  private async loop(): Promise<void> {
    const sql = plainSql(this.url, 1);
    try {
      while (!this.stopping) {
        const rows = await sql<{ app: string; state: string | null; wait: string | null; query: string }[]>`
          SELECT application_name AS app, state, wait_event_type || ':' || wait_event AS wait,
                 left(query, 48) AS query
          FROM pg_stat_activity
          WHERE datname = ${this.database} AND application_name = ANY(${this.applications as string[]})`;
        this.samples++;
        for (const r of rows) {
          const what =
            r.state === "active"
              ? `active ${r.wait ?? "(on CPU)"}: ${r.query.replace(/\s+/g, " ").trim()}`
              : r.state === "idle in transaction"
                ? `idle in transaction (after: ${r.query.replace(/\s+/g, " ").trim()})`
                : `${r.state}`;
          const key = `${r.app}: ${what}`;
          this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, this.everyMs));
      }
    } finally {
      await sql.end();
    }
  }
}
