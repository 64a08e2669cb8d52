import type { CommitKeys } from "./commit-keys.js";

/** A commit's keys and the id of the writer (`origin`) that made it. */
export type CommitHandler = (keys: CommitKeys, origin: string) => void;

/**
 * What a process hears of the journal's commits, however it hears them. A server and a worker in
 * one process (`brain start`) share the server's: Postgres signals every listening backend of a
 * database at every notifying commit, whatever its channel, so a second LISTEN on the same journal
 * would be woken by every commit only to hear what the first already heard.
 */
export interface CommitFeed {
  /**
   * `onKeys` gets every commit the feed hears of, with its writer's id (a subscriber's own
   * included: it skips what it wrote); `onConnect` runs whenever notifications may have been
   * missed (the LISTEN behind the feed connected again): subscribers look for their work again.
   * Returns what unsubscribes.
   */
  subscribe(onKeys: CommitHandler, onConnect: () => void): () => void;
}

/** The feed a process publishes to: its own writer's commits, and what its LISTEN hears. */
export class CommitFanout implements CommitFeed {
  private readonly subscribers = new Set<{ onKeys: CommitHandler; onConnect: () => void }>();

  subscribe(onKeys: CommitHandler, onConnect: () => void): () => void {
    const s = { onKeys, onConnect };
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  publish(keys: CommitKeys, origin: string): void {
    for (const s of this.subscribers) {
      try {
        s.onKeys(keys, origin);
      } catch {
        // One subscriber's failure must not keep a commit from the others (nor fail the commit).
      }
    }
  }

  reconnected(): void {
    for (const s of this.subscribers) {
      try {
        s.onConnect();
      } catch {
        // As in publish.
      }
    }
  }
}
