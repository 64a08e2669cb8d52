import { setTimeout as sleep } from "node:timers/promises";
import type { Sql } from "@aexhq/brain-db/connect";
import { liveServerUrl, SERVER_STALE_SECONDS } from "@aexhq/brain-db/ops";
import type { RunningCall } from "../running-calls.js";

/**
 * How long a call waits for a live server to give its application as the callback address. After
 * a database outage every server's heartbeat is stale until it beats again, a beat or two after
 * the database is back, and a worker back first would otherwise fail the calls it claims then for
 * want of a server. A stale window and two beats; past it, no server is up.
 */
export const CALLBACK_SERVER_WAIT_MS = (SERVER_STALE_SECONDS + 2) * 1000;
const POLL_MS = 250;

/**
 * The URL of a live server for a call's callbacks, waiting up to `waitMs` for one to beat; null
 * when none did, or when the call was stopped meanwhile (the caller checks `running.stopped`).
 */
export async function callbackServerUrl(
  sql: Sql,
  running: Pick<RunningCall, "stopped" | "signal">,
  waitMs = CALLBACK_SERVER_WAIT_MS,
): Promise<string | null> {
  const giveUpAt = performance.now() + waitMs;
  for (;;) {
    const url = await liveServerUrl(sql);
    if (url !== null || running.stopped || performance.now() >= giveUpAt) return url;
    await sleep(POLL_MS, undefined, { signal: running.signal }).catch(() => {});
  }
}
