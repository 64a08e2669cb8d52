import type { Sql } from "postgres";
import type { CommitHandler } from "./commit-feed.js";
import { decodeKeys, originPrefix } from "./commit-keys.js";
import { openLane } from "./connect.js";

export interface CommitListener {
  /** Whether the LISTEN is in place right now (false while reconnecting). */
  readonly listening: boolean;
  unlisten(): Promise<void>;
}

/** While the database is away, how often the listener tries to LISTEN again. */
const RELISTEN_MS = 250;

/**
 * LISTEN on the journal channel, on a connection of its own that is opened again, for as long as
 * it takes, whenever it closes (postgres.js's own listen gives up if the database is still down at
 * its single re-LISTEN). Notifications are lost while the connection is down, so `onConnect` runs
 * after every (re)connect: callers re-scan the tables for work there.
 */
export async function listenForCommits(
  sql: Sql,
  channel: string,
  origin: string,
  onKeys: CommitHandler,
  onConnect: () => void,
): Promise<CommitListener> {
  let stopped = false;
  let listening = false;
  let lane: Sql | undefined;
  let retry: NodeJS.Timeout | undefined;

  // Our own commits were delivered in-process already.
  const own = originPrefix(origin);
  const onNotify = (from: string, payload: string) => {
    if (from !== channel || payload.startsWith(own)) return;
    const decoded = decodeKeys(payload);
    if (decoded && decoded.origin !== origin) onKeys(decoded.keys, decoded.origin);
  };

  const open = async (): Promise<void> => {
    const mine = openLane(sql, "brain-listener", {
      onNotify,
      onClose: () => {
        if (lane !== mine) return;
        listening = false;
        lane = undefined;
        void mine.end({ timeout: 0 }).catch(() => {});
        if (!stopped) schedule();
      },
    });
    lane = mine;
    try {
      await mine.unsafe(`LISTEN "${channel.replace(/"/g, '""')}"`);
    } catch (error) {
      if (lane === mine) lane = undefined;
      await mine.end({ timeout: 0 }).catch(() => {});
      throw error;
    }
    if (stopped) return;
    listening = true;
    onConnect();
  };

  const schedule = () => {
    clearTimeout(retry);
    retry = setTimeout(() => {
      if (stopped) return;
      open().catch(() => schedule());
    }, RELISTEN_MS);
  };

  await open();
  return {
    get listening() {
      return listening;
    },
    async unlisten() {
      stopped = true;
      clearTimeout(retry);
      listening = false;
      const current = lane;
      lane = undefined;
      await current?.end({ timeout: 1 }).catch(() => {});
    },
  };
}

/** One channel per schema, so Brains sharing a database do not wake each other. */
export function channelFor(schema: string): string {
  return `${schema}_journal`;
}
