import type { Sql } from "postgres";
import { type CommitKeys, decodeKeys } from "./commit-keys.js";

/**
 * LISTEN on the journal channel. Notifications are lost while the listening connection is down,
 * so `onConnect` runs after every (re)connect: callers re-scan the tables for work there.
 */
export async function listenForCommits(
  sql: Sql,
  channel: string,
  origin: string,
  onKeys: (keys: CommitKeys) => void,
  onConnect: () => void,
): Promise<{ unlisten(): Promise<void> }> {
  const sub = await sql.listen(
    channel,
    (payload) => {
      const decoded = decodeKeys(payload);
      // Our own commits were delivered in-process already.
      if (decoded && decoded.origin !== origin) onKeys(decoded.keys);
    },
    onConnect,
  );
  return { unlisten: () => sub.unlisten() };
}

/** One channel per schema, so Brains sharing a database do not wake each other. */
export function channelFor(schema: string): string {
  return `${schema}_journal`;
}
