import { isConnectionError } from "./availability.js";
import { lostToAnother } from "./lost-race.js";

/**
 * Journal writes that must happen eventually but failed because the database was away: the
 * `unknown` ends of a lost host connection's calls, or of a call whose finishing frame could not
 * be stored (a server's host frame, a worker's component report). Without them such a call would
 * stay open with nothing left to end it (an unlimited one forever). Each is retried on every
 * heartbeat until it commits; if this process dies first, the recovery sweep of another one ends
 * the same calls, since they sit on this process's connections.
 */
export class PendingRepairs {
  private readonly work = new Map<string, () => Promise<unknown>>();

  constructor(private readonly onFailure: (err: unknown, key: string) => void) {}

  get size(): number {
    return this.work.size;
  }

  /** Keyed, so the same repair registered twice runs once. */
  add(key: string, write: () => Promise<unknown>): void {
    this.work.set(key, write);
  }

  /**
   * Runs every pending repair once, in the order they came; stops at the first database failure.
   * One that lost a deadlock or a serialization conflict (on a Citus cluster, writes to reference
   * tables meet the distributed deadlock detector) stays for the next run.
   */
  async run(): Promise<void> {
    for (const [key, write] of [...this.work]) {
      try {
        await write();
        this.work.delete(key);
      } catch (err) {
        if (isConnectionError(err) || isUnavailable(err)) return;
        if (lostToAnother(err)) continue;
        // Not the database: retrying would fail the same way.
        this.work.delete(key);
        this.onFailure(err, key);
      }
    }
  }
}

/** The writer's own answers while the database is away (or was, mid-commit). */
export function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "database_unavailable" || code === "commit_unknown";
}
