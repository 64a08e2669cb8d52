import type { Sql } from "postgres";
import { tables } from "../tables.js";
import { chargeComponent, chargedForComponent, checkQuota } from "./quotas.js";

/** Uploaded WebAssembly components, content-addressed by the SHA-256 of their bytes. */

export async function componentExists(sql: Sql, sha256: string): Promise<boolean> {
  const brain = tables(sql);
  const [row] = await sql`SELECT 1 FROM ${brain.components} WHERE sha256 = ${sha256}`;
  return row !== undefined;
}

/** Which of these digests have not been uploaded. */
export async function missingComponents(sql: Sql, digests: Iterable<string>): Promise<string[]> {
  const brain = tables(sql);
  const wanted = [...digests];
  if (wanted.length === 0) return [];
  const found = await sql<{ sha256: string }[]>`
    SELECT sha256 FROM ${brain.components} WHERE sha256 = ANY(${sql.array(wanted)}::text[])`;
  const have = new Set(found.map((r) => r.sha256));
  return wanted.filter((c) => !have.has(c));
}

/** Stores an admitted upload; the same bytes uploaded twice are stored once. */
export async function storeComponent(
  sql: Sql,
  component: { sha256: string; bytes: Buffer; size: number; wit: string },
  /**
   * The uploading application token (absent: the operator), charged for it once; `quota`: its
   * component-bytes quota applies, checked in the same transaction.
   */
  uploader?: { tokenId: string; quota?: { fallback: number | null } },
): Promise<void> {
  const brain = tables(sql);
  const { sha256, bytes, size, wit } = component;
  await sql.begin(async (tx) => {
    const charged = uploader ? await chargedForComponent(tx, uploader.tokenId, sha256) : true;
    if (uploader && !charged && uploader.quota) {
      await checkQuota(tx, uploader.tokenId, "componentBytes", uploader.quota.fallback, size);
    }
    await tx`
      INSERT INTO ${brain.components} (sha256, bytes, size, wit) VALUES (${sha256}, ${bytes}, ${size}, ${wit})
      ON CONFLICT (sha256) DO NOTHING`;
    if (uploader && !charged) await chargeComponent(tx, uploader.tokenId, sha256, size);
  });
}

/** A component's bytes, or null when it was never uploaded. */
export async function componentBytes(sql: Sql, sha256: string): Promise<Buffer | null> {
  const brain = tables(sql);
  const [row] = await sql<{ bytes: Buffer }[]>`SELECT bytes FROM ${brain.components} WHERE sha256 = ${sha256}`;
  return row?.bytes ?? null;
}
