import { type Judgement, SERVER_STALE_SECONDS } from "@aexhq/brain-db/ops";

/** How long this server must have reached the database without a break before it judges others. */
export const JUDGE_AFTER_MS = (SERVER_STALE_SECONDS + 1) * 1000;

/**
 * What this server may conclude from the other servers' heartbeats, given its own.
 *
 * After a database outage (a restart, a network cut) every process's heartbeat is stale at once,
 * and the first server back would find all the others "dead". Three rules keep it from acting on
 * that before they had the time to beat again:
 *
 * - Declaring dead (which ends a server's dispatched calls `unknown`) waits until this server has
 *   reached the database for a stale window and a beat without a break (`mayDeclareDead`).
 * - Taking over sessions waits the same way, but only for owners that were as alive as this
 *   server before the outage: an owner whose last beat is no more than a stale window older than
 *   this server's own last beat before the outage is presumed live meanwhile. A server that died
 *   long before stays claimable at once, so a server started fresh (no outage behind it) takes
 *   over a killed one's sessions without waiting.
 * - Both judge as of this server's own last beat plus a beat interval (`judgedAt`), not as of
 *   when the statement runs: the pool holds statements sent during an outage and runs them after
 *   it, with what was decided before this server noticed it.
 *
 * Every moment compared is on the database's clock: no two hosts' clocks meet.
 */
export class Liveness {
  /** The last beat that went through. */
  private lastBeat: Date | null = null;
  /** The last beat made while nobody was presumed live: what the others are measured against. */
  private steadyBeat: Date | null = null;
  private beforeOutage: Date | null = null;

  /**
   * `upFor`: how long the database has answered without interruption (DatabaseAvailability);
   * `beatMs`: the interval between this server's beats.
   */
  constructor(
    private readonly upFor: () => number,
    private readonly beatMs: number,
  ) {}

  /**
   * This server's heartbeat went through at `at`. Beats while others are presumed live do not move
   * the mark: after a restart the pool's old connections fail one by one as they are next used,
   * each failure is another outage, and a mark moved to a beat made between two of them would
   * leave the others, who had no time to beat yet, unprotected.
   */
  beat(at: Date): void {
    this.lastBeat = at;
    if (this.presumedLiveSince() === null) this.steadyBeat = at;
  }

  /** The database went away: the last steady beat before it is what the others are measured against. */
  away(): void {
    if (this.steadyBeat !== null) this.beforeOutage = this.steadyBeat;
  }

  mayDeclareDead(): boolean {
    return this.verdicts().mayDeclareDead;
  }

  /** Owners whose last beat is at or after this count as live though stale; null: none do. */
  presumedLiveSince(): Date | null {
    return this.verdicts().judgement.presumedLiveSince;
  }

  /** What the database statements that judge others are given (db/src/ops/ownership.ts). */
  judgement(): Judgement {
    return this.verdicts().judgement;
  }

  /**
   * Both verdicts as of one moment. A sweep that declares and then claims must judge by one of
   * these: asked twice, the stale window can end in between, and the claims would take the
   * sessions of a server the sweep did not yet declare dead (presumed live a moment before).
   */
  verdicts(): Verdicts {
    const mayDeclareDead = this.upFor() > JUDGE_AFTER_MS;
    const presumedLiveSince =
      this.beforeOutage === null || mayDeclareDead
        ? null
        : new Date(this.beforeOutage.getTime() - SERVER_STALE_SECONDS * 1000);
    const judgedAt = this.lastBeat === null ? null : new Date(this.lastBeat.getTime() + this.beatMs);
    return { mayDeclareDead, judgement: { judgedAt, presumedLiveSince } };
  }
}

export interface Verdicts {
  readonly mayDeclareDead: boolean;
  readonly judgement: Judgement;
}
