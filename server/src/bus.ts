import { type CommitKeys, Touch } from "@aexhq/brain-db";
import { KeyedListeners } from "./keyed-listeners.js";

const EVERY_TOUCH = Object.values(Touch).reduce((all, bit) => all | bit, 0);

/**
 * Delivers committed keys inside this process: from our own journal writer directly, and from
 * other processes through LISTEN/NOTIFY. Subscribers re-read the tables; the bus carries no data.
 */
export class CommitBus {
  private readonly sessions = new KeyedListeners<[bits: number]>();
  private readonly sessionHooks: ((sessionId: string, bits: number) => void)[] = [];
  private readonly hostHooks: ((hostId: string) => void)[] = [];
  private readonly rescanHooks: (() => void)[] = [];
  private readonly releaseHooks: ((sessionId: string, hostId: string) => void)[] = [];

  deliver(keys: CommitKeys): void {
    for (const [id, bits] of keys.sessions) {
      for (const hook of this.sessionHooks) hook(id, bits);
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

  onSession(sessionId: string, fn: (bits: number) => void): () => void {
    return this.sessions.on(sessionId, fn);
  }

  onAnySession(fn: (sessionId: string, bits: number) => void): void {
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
