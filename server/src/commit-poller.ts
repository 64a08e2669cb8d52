import { type CommitKeys, emptyKeys, Touch } from "@aexhq/brain-db/commits";
import type { Sql } from "@aexhq/brain-db/connect";
import { sessionSeqs } from "@aexhq/brain-db/ops";
import { type CommitBus, EVERY_TOUCH } from "./bus.js";

/** A session that moved: everything but its end, which only an ended or deleted one announces. */
const MOVED = EVERY_TOUCH & ~Touch.ended;

/** What the poller looks at: the sessions and hosts this server serves now. */
export interface PolledSources {
  /** Sessions whose Agentloop runs here. */
  actors(): Iterable<string>;
  /** Whether the session's Agentloop runs here now. */
  resident(sessionId: string): boolean;
  /** Hosts with a connection to this server. */
  hosts(): Iterable<string>;
  /** The sessions connections here said they serve, with their host: told when one ends. */
  served(): Iterable<readonly [sessionId: string, hostId: string]>;
  /** Looks up this server's parked sessions and resumes those whose journal moved on. */
  resumeParked(): Promise<void>;
}

/**
 * Wake-ups for a server that cannot LISTEN (behind a transaction pooler with no direct URL, or
 * notifications that never arrive): every tick it reads where the journals it cares about end,
 * one statement for all of them, and delivers a commit for each one that moved since the last
 * tick (or that it had not seen yet), as a NOTIFY would have; every connected host looks for
 * calls to claim or cancel, a host is told of a session it serves that ended, and parked sessions
 * that moved are resumed. A session nothing moved in is not touched: its Agentloop stays idle and
 * parks as it would.
 */
export class CommitPoller {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly bus: CommitBus,
    private readonly sources: PolledSources,
  ) {}

  /** One look. Run by `periodic` (wakeups.ts), which never starts one while another runs. */
  async tick(): Promise<void> {
    const moved = await this.moved();
    const keys = emptyKeys();
    keys.releases = moved.releases;
    for (const [id, bits] of moved.sessions) {
      if (bits & Touch.ended || this.sources.resident(id)) keys.sessions.set(id, bits);
      else this.bus.touch(id, bits);
    }
    for (const host of this.sources.hosts()) keys.hosts.add(host);
    this.bus.deliver(keys);
    await this.sources.resumeParked();
  }

  private async moved(): Promise<CommitKeys> {
    const served = new Map(this.sources.served());
    const ids = new Set([...this.sources.actors(), ...this.bus.watched(), ...served.keys()]);
    const seqs = await sessionSeqs(this.sql, [...ids]);
    const keys = emptyKeys();
    for (const id of ids) {
      const now = seqs.get(id);
      const seq = now?.seq ?? -1;
      const gone = now === undefined || now.ended;
      if (this.seen.get(id) !== seq) keys.sessions.set(id, gone ? EVERY_TOUCH : MOVED);
      const host = served.get(id);
      if (gone && host !== undefined) keys.releases.set(id, host);
      this.seen.set(id, seq);
    }
    for (const id of this.seen.keys()) if (!ids.has(id)) this.seen.delete(id);
    return keys;
  }
}
