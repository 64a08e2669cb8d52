import type { ToolPlacement } from "@aexhq/brain-contracts";
import { sessionModelConfig } from "@aexhq/brain-core/models";
import { claimSession, getSession, sessionNamedHosts, Touch, type WrittenRecord } from "@aexhq/brain-db";
import type { Services } from "../services.js";
import { type ActorDeps, SessionActor } from "./actor.js";

export type ActorsDeps = ActorDeps & Pick<Services, "serverId" | "secrets">;

/** How long to remember that another live server owns a session before asking again. */
const OWNED_ELSEWHERE_MS = 1000;

/**
 * The sessions whose Agentloop runs in this process. A session gets an actor when work arrives
 * for it and this server can claim it (nobody else alive owns it); the claim bumps the fencing
 * epoch, so the previous owner, if it is only slow, can no longer write.
 */
export class ActorRegistry {
  private readonly actors = new Map<string, SessionActor>();
  private readonly claiming = new Map<string, Promise<SessionActor | null>>();
  private readonly elsewhere = new Map<string, number>();
  /** Set by stopAll (shutdown): from then on this server takes no session, not even back. */
  private stopped = false;

  constructor(private readonly rt: ActorsDeps) {}

  get size(): number {
    return this.actors.size;
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
    if (!(bits & (Touch.message | Touch.observation))) return;
    // Every server hears every commit; one that just failed to claim this session leaves it be.
    const until = this.elsewhere.get(sessionId);
    if (until !== undefined && until > Date.now()) return;
    void this.resume(sessionId);
  }

  /** Claims the session if it is free and starts its actor; null when another server runs it. */
  async resume(sessionId: string): Promise<SessionActor | null> {
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
    if (!pending) {
      pending = this.claim(sessionId).finally(() => this.claiming.delete(sessionId));
      this.claiming.set(sessionId, pending);
    }
    const actor = await pending;
    actor?.kick();
    return actor;
  }

  private async claim(sessionId: string): Promise<SessionActor | null> {
    try {
      const epoch = await claimSession(this.rt.sql, sessionId, this.rt.serverId);
      if (epoch === null) {
        if (this.elsewhere.size > 10_000) {
          const now = Date.now();
          for (const [id, until] of this.elsewhere) if (until <= now) this.elsewhere.delete(id);
        }
        this.elsewhere.set(sessionId, Date.now() + OWNED_ELSEWHERE_MS);
        return null;
      }
      this.elsewhere.delete(sessionId);
      const row = await getSession(this.rt.sql, sessionId);
      if (!row) return null;
      const info = {
        id: row.id,
        hostId: row.host_id,
        namedHosts: await sessionNamedHosts(this.rt.sql, row.id),
        model: await sessionModelConfig(this.rt.sql, this.rt.secrets, row.id, row.model),
        tools: row.tools as ToolPlacement[],
      };
      // Stopped while claiming: the session stays ours until this server is marked stopped, then
      // it is anyone's (recovery), like every other session this server ran.
      if (this.stopped) return null;
      const actor = new SessionActor(this.rt, info, epoch, (a) => {
        if (this.actors.get(a.session.id) === a) this.actors.delete(a.session.id);
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

  /** Every actor catches up from the journal (after a missed-notification window). */
  kickAll(): void {
    for (const a of this.actors.values()) a.kick();
  }

  stopAll(): void {
    this.stopped = true;
    for (const a of [...this.actors.values()]) a.stop("shutdown");
  }
}
