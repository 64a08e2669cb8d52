import type { ToolPlacement } from "@aexhq/brain-contracts";
import { sessionModelConfig } from "@aexhq/brain-core/models";
import { Touch } from "@aexhq/brain-db/commits";
import {
  claimParkedSessions,
  claimSession,
  type Judgement,
  journalsBehind,
  markParked,
  parkedSessionsAhead,
} from "@aexhq/brain-db/ops";
import type { WrittenRecord } from "@aexhq/brain-db/writer";
import type { Services } from "../services.js";
import { type ActorDeps, SessionActor } from "./actor.js";

export type ActorsDeps = ActorDeps & Pick<Services, "serverId" | "secrets" | "liveness" | "distributed">;

/** What a resume found: the session's running actor, "parked" (owned here, nothing to do), or null (not ours). */
export type Resumed = SessionActor | "parked" | null;

/** How long to remember that another live server owns a session before asking again. */
const OWNED_ELSEWHERE_MS = 1000;
/** Parked sessions looked up per statement on a rescan. */
const PARKED_PAGE = 5_000;

/**
 * The sessions whose Agentloop runs in this process. A session gets an actor when work arrives
 * for it and this server can claim it (nobody else alive owns it); the claim bumps the fencing
 * epoch, so the previous owner, if it is only slow, can no longer write.
 *
 * An actor idle for BRAIN_SESSION_IDLE_MS is parked: it stops and its folded state (the whole
 * conversation, every call) goes, while the session stays owned by this server, so no other
 * server resumes it. What is kept is the sequence it had reached. A commit that wakes the session
 * claims it again (as a takeover would: a new epoch, the state rebuilt from the journal); after a
 * missed-notification window, the rescan resumes every parked session whose journal moved on.
 * The sequence also goes to `sessions.parked_seq` (migration 0018), for idle actors on shutdown
 * too: a server that claims a session whose journal has not moved past it owns it parked, with
 * no read and no actor, so taking over a server's idle sessions costs one claim each.
 */
export class ActorRegistry {
  private readonly actors = new Map<string, SessionActor>();
  private readonly claiming = new Map<string, Promise<Resumed>>();
  private readonly elsewhere = new Map<string, number>();
  /** Parked sessions: the last sequence each one's actor knew of. */
  private readonly parked = new Map<string, number>();
  /** Set by stopAll (shutdown): from then on this server takes no session, not even back. */
  private stopped = false;

  constructor(private readonly rt: ActorsDeps) {}

  get size(): number {
    return this.actors.size;
  }

  /** Sessions this server owns whose actor let go of its state (read at metrics scrapes). */
  get parkedCount(): number {
    return this.parked.size;
  }

  /** The actors running here (read at metrics scrapes). */
  all(): IterableIterator<SessionActor> {
    return this.actors.values();
  }

  get(sessionId: string): SessionActor | undefined {
    return this.actors.get(sessionId);
  }

  /** `records`: what the commit wrote to the session, when this process wrote and described it all. */
  onCommit(sessionId: string, bits: number, records?: WrittenRecord[]): void {
    const actor = this.actors.get(sessionId);
    if (actor) {
      actor.heard(records);
      if (bits & (Touch.message | Touch.ended)) actor.window.now();
      else if (bits & Touch.observation) actor.window.observe();
      return;
    }
    if (bits & Touch.ended) this.parked.delete(sessionId);
    if (!(bits & (Touch.message | Touch.observation))) return;
    // Every server hears every commit; one that just failed to claim this session leaves it be.
    const until = this.elsewhere.get(sessionId);
    if (until !== undefined && until > Date.now()) return;
    void this.resume(sessionId);
  }

  /**
   * Claims the session if it is free and starts its actor, or parks it when it was parked with
   * nothing since; null when another server runs it.
   */
  async resume(sessionId: string, options: { parkWhenIdle?: boolean } = {}): Promise<Resumed> {
    // A stopping server still hears commits (the calls it ends unknown on its way out, other
    // servers' turns): a claim would take a session for the seconds until this server is marked
    // stopped, and start an Agentloop there that can no longer write.
    if (this.stopped) return null;
    const existing = this.actors.get(sessionId);
    if (existing) {
      existing.kick();
      return existing;
    }
    let pending = this.claiming.get(sessionId);
    const joined = pending !== undefined;
    if (!pending) {
      pending = this.claim(sessionId).finally(() => this.claiming.delete(sessionId));
      this.claiming.set(sessionId, pending);
    }
    const actor = await pending;
    // A claim already under way when this wake-up came (the sweep's, a rescan's) may have read the
    // session before the commit that woke it, and found it parked: claim again, after that commit.
    if (joined && actor === "parked") return this.resume(sessionId, options);
    if (actor instanceof SessionActor) {
      // Only an actor this claim started: one a wake-up started first has work.
      if (options.parkWhenIdle && !joined) actor.parkWhenIdle();
      actor.kick();
    }
    return actor;
  }

  /**
   * A session this server just created: owned here with no Agentloop yet, so parked at its first
   * record. A server that cannot LISTEN (polling) finds its first message by that sequence, as it
   * finds a parked session's; a message sent through another server reaches it only so.
   */
  created(sessionId: string, lastSeq: number): void {
    if (this.stopped || this.actors.has(sessionId) || this.claiming.has(sessionId)) return;
    if (!this.parked.has(sessionId)) this.parked.set(sessionId, lastSeq);
  }

  /**
   * Takes, in one statement, those of `ids` that were parked with nothing since and have no live
   * owner, and owns them parked (the sweep's shortcut for a stopped server's idle sessions);
   * returns their ids. The rest are for `resume`, one by one.
   */
  async resumeParked(ids: readonly string[], judge: Judgement): Promise<Set<string>> {
    if (this.stopped || ids.length === 0) return new Set();
    const taken = await claimParkedSessions(this.rt.sql, ids, this.rt.serverId, judge, {
      skipLocked: !this.rt.distributed,
    });
    for (const { id, lastSeq } of taken) {
      this.elsewhere.delete(id);
      // A commit since the claim woke it (its own claim, under way or done, bumped the epoch
      // again): that claim decides, not this one.
      if (this.stopped || this.actors.has(id) || this.claiming.has(id)) continue;
      this.parked.set(id, lastSeq);
    }
    return new Set(taken.map((t) => t.id));
  }

  private async claim(sessionId: string): Promise<Resumed> {
    try {
      const claim = await claimSession(this.rt.sql, sessionId, this.rt.serverId, this.rt.liveness.judgement());
      // Claimed again, or another server owns it now: either way it is parked here no longer.
      this.parked.delete(sessionId);
      if (claim === null) {
        if (this.elsewhere.size > 10_000) {
          const now = Date.now();
          for (const [id, until] of this.elsewhere) if (until <= now) this.elsewhere.delete(id);
        }
        this.elsewhere.set(sessionId, Date.now() + OWNED_ELSEWHERE_MS);
        return null;
      }
      this.elsewhere.delete(sessionId);
      if (claim.parked) {
        // Nothing has happened since its Agentloop was parked with nothing to do: own it parked.
        // (A commit that woke it moved last_seq past parked_seq, and this claim builds an actor.)
        if (this.stopped) return null;
        this.parked.set(sessionId, claim.lastSeq);
        return "parked";
      }
      const epoch = claim.epoch;
      const row = claim.session!;
      const info = {
        id: row.id,
        hostId: row.hostId,
        namedHosts: row.namedHosts,
        model: await sessionModelConfig(this.rt.sql, this.rt.secrets, row.id, row.model),
        tools: row.tools as ToolPlacement[],
        tokenId: row.tokenId,
      };
      // Stopped while claiming: the session stays ours until this server is marked stopped, then
      // it is anyone's (recovery), like every other session this server ran.
      if (this.stopped) return null;
      const actor = new SessionActor(this.rt, info, epoch, (a, reason) => {
        if (this.actors.get(a.session.id) === a) this.actors.delete(a.session.id);
        // Its state held records the database lost: a new Agentloop reads what it has.
        if (reason === "behind") void this.resume(a.session.id);
      });
      this.actors.set(sessionId, actor);
      return actor;
    } catch (error) {
      // The pool ends during shutdown; a claim cut short by it is no fault.
      if (this.stopped) return null;
      this.rt.log.error({ err: error, sessionId }, "could not resume session");
      return null;
    }
  }

  /**
   * After an outage: the sessions whose journal in the database ends before what this server had
   * folded (a fail-over to a standby that lacked the last commits) lose their in-memory state and
   * are read again from the journal the database has; returns their ids. Run before the rescan.
   */
  async restartBehind(): Promise<string[]> {
    const folded = [
      ...[...this.actors.values()].map((a) => ({ id: a.session.id, seq: a.state.lastSeq })),
      ...[...this.parked].map(([id, seq]) => ({ id, seq })),
    ];
    const behind = await journalsBehind(this.rt.sql, folded);
    for (const id of behind) {
      this.parked.delete(id);
      // Resumed on stop (see claim); a parked one has no actor to stop.
      const actor = this.actors.get(id);
      if (actor) actor.stop("behind");
      else void this.resume(id);
    }
    return behind;
  }

  /** Every actor catches up from the journal (after a missed-notification window), parked ones too. */
  kickAll(): void {
    for (const a of this.actors.values()) a.kick();
    void this.resumeAhead().catch((err) => {
      if (!this.stopped) this.rt.log.warn({ err }, "could not look up parked sessions");
    });
  }

  /** The sessions whose actor runs here. */
  ids(): string[] {
    return [...this.actors.keys()];
  }

  /**
   * Parks every actor idle for BRAIN_SESSION_IDLE_MS (run each heartbeat tick). Synchronous: a
   * commit for the session is handled either before (the actor is busy, not parked) or after (it
   * finds no actor and claims the session again).
   */
  async parkIdle(now = Date.now()): Promise<number> {
    const idleMs = this.rt.config.sessionIdleMs;
    if (idleMs <= 0 || this.stopped) return 0;
    const marks: { id: string; epoch: number; seq: number }[] = [];
    for (const actor of this.actors.values()) {
      if (!actor.parkable(now, idleMs)) continue;
      // The folded sequence, in memory as in the mark: anything later is news (the rescan resumes it).
      this.parked.set(actor.session.id, actor.state.lastSeq);
      marks.push({ id: actor.session.id, epoch: actor.epoch, seq: actor.state.lastSeq });
      actor.stop("idle");
    }
    await this.mark(marks);
    return marks.length;
  }

  /**
   * On shutdown, before the actors stop: records every actor with nothing to do as parked, however
   * briefly idle, so that whoever takes its sessions over owns the idle ones without reading them.
   */
  async markIdleOnShutdown(): Promise<void> {
    const marks: { id: string; epoch: number; seq: number }[] = [];
    for (const actor of this.actors.values()) {
      if (actor.parkable(Date.now(), 0))
        marks.push({ id: actor.session.id, epoch: actor.epoch, seq: actor.state.lastSeq });
    }
    await this.mark(marks);
  }

  /** Writes parked sequences; a failure only costs a later takeover its shortcut. */
  private async mark(marks: { id: string; epoch: number; seq: number }[]): Promise<void> {
    try {
      await markParked(this.rt.sql, marks);
    } catch (err) {
      if (!this.rt.availability.observe(err)) this.rt.log.warn({ err }, "could not record parked sessions");
    }
  }

  /** Resumes the parked sessions whose journal went past what their actor knew; forgets those no longer ours. */
  async resumeAhead(): Promise<void> {
    const entries = [...this.parked];
    for (let i = 0; i < entries.length; i += PARKED_PAGE) {
      const page = entries.slice(i, i + PARKED_PAGE);
      const found = await parkedSessionsAhead(this.rt.sql, this.rt.serverId, page);
      const seen = new Set<string>();
      for (const { id, ahead, ours } of found) {
        seen.add(id);
        if (!ours) this.parked.delete(id);
        else if (ahead) void this.resume(id);
      }
      // Deleted meanwhile (retention): nothing left to resume.
      for (const [id] of page) if (!seen.has(id)) this.parked.delete(id);
    }
  }

  stopAll(): void {
    this.stopped = true;
    for (const a of [...this.actors.values()]) a.stop("shutdown");
  }
}
