import type { Sql } from "postgres";
import type { SecretBox } from "../secrets.js";
import { tables } from "../tables.js";
import { secretAad } from "./secrets.js";

/** What `brain keys rotate` did: secrets re-sealed, and those sealed under keys not in the ring. */
export interface Resealed {
  resealed: number;
  /** Secrets no key of the ring opens, by the fingerprint they were sealed under. */
  unreadable: Record<string, number>;
}

interface SealedRow {
  session_id: string;
  name: string;
  key_id: string;
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

const BATCH = 500;

/**
 * Re-seals under the ring's primary key every session secret sealed under another of its keys, so
 * that the old keys can then leave the ring. A page of them is read in key order, then each is
 * written back only if it is still the one read (its nonce is drawn afresh at every seal): a
 * secret written meanwhile is newer, and sealed under the primary key already. No rows are
 * locked, so a Citus cluster (which will not lock rows of many shards in one statement) runs it
 * as one Postgres does. A secret under a key the ring lacks is left as it is and counted.
 */
export async function resealSecrets(sql: Sql, box: SecretBox): Promise<Resealed> {
  const brain = tables(sql);
  const done: Resealed = { resealed: 0, unreadable: {} };
  let after = { session: "00000000-0000-0000-0000-000000000000", name: "" };
  for (;;) {
    const batch = await sql<SealedRow[]>`
      SELECT session_id, name, key_id, nonce, ciphertext, tag FROM ${brain.session_secrets}
      WHERE key_id <> ${box.keyId} AND (session_id, name) > (${after.session}::uuid, ${after.name})
      ORDER BY session_id, name LIMIT ${BATCH}`;
    for (const row of batch) {
      if (!box.keyIds.includes(row.key_id)) {
        done.unreadable[row.key_id] = (done.unreadable[row.key_id] ?? 0) + 1;
        continue;
      }
      const aad = secretAad(row.session_id, row.name);
      const sealed = box.seal(
        box.open({ keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag }, aad),
        aad,
      );
      const written = await sql`
        UPDATE ${brain.session_secrets} SET key_id = ${sealed.keyId}, nonce = ${sealed.nonce},
               ciphertext = ${sealed.ciphertext}, tag = ${sealed.tag}
        WHERE session_id = ${row.session_id} AND name = ${row.name} AND nonce = ${row.nonce}`;
      done.resealed += written.count;
    }
    const last = batch.at(-1);
    if (!last || batch.length < BATCH) return done;
    after = { session: last.session_id, name: last.name };
  }
}

/** How many session secrets each key fingerprint seals now. */
export async function secretsByKey(sql: Sql): Promise<Record<string, number>> {
  const brain = tables(sql);
  const rows = await sql<{ key_id: string; n: number }[]>`
    SELECT key_id, count(*)::int AS n FROM ${brain.session_secrets} GROUP BY key_id ORDER BY key_id`;
  return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
}
