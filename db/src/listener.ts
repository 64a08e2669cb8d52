import type { Sql } from "postgres";
import type { CommitHandler } from "./commit-feed.js";
import { decodeKeys, originPrefix } from "./commit-keys.js";
import { openLane } from "./connect.js";
import { idleSessionTimeoutMs } from "./ops/idle-session-timeout.js";

export interface CommitListener {
  /** Whether the LISTEN is in place right now (false while reconnecting). */
  readonly listening: boolean;
  /**
   * Sends a NOTIFY on the channel from another connection and resolves whether it arrived within
   * `timeoutMs`. Not through a transaction-mode pooler, whose LISTEN session is not kept, nor a
   * proxy that drops notifications.
   */
  probe(timeoutMs: number): Promise<boolean>;
  unlisten(): Promise<void>;
}

/** A probe's payload: no commit's (those start with their origin's prefix), dropped unparsed by other processes. */
const PROBE = "probe:";

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
  live?: LiveChannel,
): Promise<CommitListener> {
  let stopped = false;
  let listening = false;
  let lane: Sql | undefined;
  let retry: NodeJS.Timeout | undefined;
  let keepAlive: NodeJS.Timeout | undefined;

  // Our own commits were delivered in-process already.
  const own = originPrefix(origin);
  const probes = new Map<string, () => void>();
  const onNotify = (from: string, payload: string) => {
    if (live && from === live.channel) return live.onPayload(payload);
    if (from !== channel) return;
    if (payload.startsWith(PROBE)) return probes.get(payload)?.();
    if (payload.startsWith(own)) return;
    const decoded = decodeKeys(payload);
    if (decoded && decoded.origin !== origin) onKeys(decoded.keys, decoded.origin);
  };

  const open = async (): Promise<void> => {
    const mine = openLane(sql, "brain-listener", {
      onNotify,
      onClose: () => {
        if (lane !== mine) return;
        clearInterval(keepAlive);
        listening = false;
        lane = undefined;
        void mine.end({ timeout: 0 }).catch(() => {});
        if (!stopped) schedule();
      },
    });
    lane = mine;
    try {
      await mine.unsafe(`LISTEN ${quoted(channel)}`);
      if (live) await mine.unsafe(`LISTEN ${quoted(live.channel)}`);
    } catch (error) {
      if (lane === mine) lane = undefined;
      await mine.end({ timeout: 0 }).catch(() => {});
      throw error;
    }
    if (stopped) return;
    listening = true;
    keepAlive = await keepAliveUnder(mine, keepAlive);
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
    probe: (timeoutMs) => probeOnce(sql, channel, origin, probes, timeoutMs),
    async unlisten() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(keepAlive);
      listening = false;
      const current = lane;
      lane = undefined;
      await current?.end({ timeout: 1 }).catch(() => {});
    },
  };
}

/**
 * A LISTEN connection is idle between notifications, and a role's `idle_session_timeout` (a DBA's
 * setting, Postgres 14+) would close it, losing what is notified until it is back: under such a
 * limit it runs a `SELECT 1` twice per period.
 */
async function keepAliveUnder(lane: Sql, previous: NodeJS.Timeout | undefined): Promise<NodeJS.Timeout | undefined> {
  clearInterval(previous);
  const ms = await idleSessionTimeoutMs(lane);
  if (ms === 0) return undefined;
  const timer = setInterval(() => void lane`SELECT 1`.catch(() => {}), Math.max(50, ms / 2));
  timer.unref();
  return timer;
}

/** One channel per schema, so Brains sharing a database do not wake each other. */
export function channelFor(schema: string): string {
  return `${schema}_journal`;
}

/** A second channel on the same LISTEN connection, for what is not a commit (live text). */
export interface LiveChannel {
  channel: string;
  onPayload(payload: string): void;
}

/** The schema's live-text channel: models' text as it streams, apart from the commits' keys. */
export function liveChannelFor(schema: string): string {
  return `${schema}_live`;
}

function quoted(channel: string): string {
  return `"${channel.replace(/"/g, '""')}"`;
}

/** Sends a NOTIFY of its own on `channel` and answers whether the LISTEN heard it within `timeoutMs`. */
async function probeOnce(
  sql: Sql,
  channel: string,
  origin: string,
  probes: Map<string, () => void>,
  timeoutMs: number,
): Promise<boolean> {
  const payload = `${PROBE}${origin}:${Math.random().toString(36).slice(2)}`;
  let timer: NodeJS.Timeout | undefined;
  const arrived = new Promise<boolean>((resolve) => {
    probes.set(payload, () => resolve(true));
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    await sql`SELECT pg_notify(${channel}, ${payload})`;
    return await arrived;
  } finally {
    clearTimeout(timer);
    probes.delete(payload);
  }
}
