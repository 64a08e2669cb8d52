import { SERVER_STALE_SECONDS } from "@aexhq/brain-db";

/** How long this server must have reached the database without a break before it judges others. */
export const JUDGE_AFTER_MS = (SERVER_STALE_SECONDS + 1) * 1000;

/**
 * What this server may conclude from the other servers' heartbeats, given its own.
 *
 * After a database outage (a restart, a network cut) every process's heartbeat is stale at once,
 * and the first server back would find all the others "dead". Two rules keep it from acting on
 * that before they had the time to beat again:
 *
 * - Declaring dead (which ends a server's dispatched calls `unknown`) waits until this server has
 *   reached the database for a stale window and a beat without a break (`mayDeclareDead`).
 * - Taking over sessions waits the same way, but only for owners that were as alive as this
 *   server before the outage: an owner whose last beat is no more than a stale window older than
 *   this server's own last beat before the outage is presumed live meanwhile
 *   (`presumedLiveSince`). A server that died long before stays claimable at once, so a server
 *   started fresh (no outage behind it) takes over a killed one's sessions without waiting.
 *
 * The comparison is between heartbeats, both on the database's clock: no two hosts' clocks meet.
 */
export class Liveness {
  private lastBeat: Date | null = null;
  private beforeOutage: Date | null = null;

  /** `upFor`: how long the database has answered without interruption (DatabaseAvailability). */
  constructor(private readonly upFor: () => number) {}

  /** This server's heartbeat went through at `at` (the database's clock). */
  beat(at: Date): void {
    this.lastBeat = at;
  }

  /** The database went away: the last beat before it is what the others are measured against. */
  away(): void {
    if (this.lastBeat !== null) this.beforeOutage = this.lastBeat;
  }

  mayDeclareDead(): boolean {
    return this.upFor() > JUDGE_AFTER_MS;
  }

  /** Owners whose last beat is at or after this count as live though stale; null: none do. */
  presumedLiveSince(): Date | null {
    if (this.beforeOutage === null || this.mayDeclareDead()) return null;
    return new Date(this.beforeOutage.getTime() - SERVER_STALE_SECONDS * 1000);
  }
}
