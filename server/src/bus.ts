import { type CommitKeys, Touch } from "@aexhq/brain-db/commits";
import type { WrittenRecord } from "@aexhq/brain-db/writer";
import { KeyedListeners } from "./keyed-listeners.js";

/** `records`: what this process wrote to the session in that commit, when it knows it all. */
type SessionHook = (sessionId: string, bits: number, records: WrittenRecord[] | undefined) => void;

export const EVERY_TOUCH = Object.values(Touch).reduce((all, bit) => all | bit, 0);

/**
 * Delivers committed keys inside this process: from our own journal writer directly, and from
 * other processes through LISTEN/NOTIFY. Subscribers re-read the tables; the bus carries no data,
 * except the records our own writer described (WriteOp.written), which a session's Agentloop
 * folds instead of reading them back.
 */
export class CommitBus {
  private readonly sessions = new KeyedListeners<[bits: number]>();
  private readonly sessionHooks: SessionHook[] = [];
  private readonly hostHooks: ((hostId: string) => void)[] = [];
  private readonly rescanHooks: (() => void)[] = [];
  private readonly releaseHooks: ((sessionId: string, hostId: string) => void)[] = [];

  /** `written`: from this process's writer only; a session it lacks must be read. */
  deliver(keys: CommitKeys, written?: ReadonlyMap<string, WrittenRecord[]>): void {
    for (const [id, bits] of keys.sessions) {
      const records = written?.get(id);
      for (const hook of this.sessionHooks) hook(id, bits, records);
      this.sessions.emit(id, bits);
    }
    for (const h of keys.hosts) for (const hook of this.hostHooks) hook(h);
    for (const [s, h] of keys.releases) for (const hook of this.releaseHooks) hook(s, h);
  }

  /**
   * After the LISTEN connection (re)connects, notifications may have been missed: every waiter on
   * a session (event streams, requests waiting for a turn, call signals) looks again, as if its
   * session had been touched in every way, and so do the rescan hooks.
   */
  rescan(): void {
    for (const id of this.sessions.keys()) this.sessions.emit(id, EVERY_TOUCH);
    for (const hook of this.rescanHooks) hook();
  }

  /** Tells only the waiters on a session (event streams, turns, call signals) that it moved. */
  touch(sessionId: string, bits: number): void {
    this.sessions.emit(sessionId, bits);
  }

  /** The sessions someone in this process waits on (event streams, turns, call signals). */
  watched(): string[] {
    return this.sessions.keys();
  }

  onSession(sessionId: string, fn: (bits: number) => void): () => void {
    return this.sessions.on(sessionId, fn);
  }

  onAnySession(fn: SessionHook): void {
    this.sessionHooks.push(fn);
  }

  onHost(fn: (hostId: string) => void): void {
    this.hostHooks.push(fn);
  }

  /** A session ended or was deleted: its host, wherever connected, drops its handlers. */
  onRelease(fn: (sessionId: string, hostId: string) => void): void {
    this.releaseHooks.push(fn);
  }

  onRescan(fn: () => void): void {
    this.rescanHooks.push(fn);
  }
}
