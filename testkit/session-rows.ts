import { randomUUID } from "node:crypto";
import type { Sql } from "@aexhq/brain-db/connect";
import { createSession, registerServer, stopServer } from "@aexhq/brain-db/ops";
import type { WriteOp } from "@aexhq/brain-db/writer";

/**
 * The write that creates a bare session for db-level tests: a scripted model with no steps, no
 * tools, owned by `ownerId` and served by `hostId` (both rows the test inserted).
 */
export function bareSession(
  id: string,
  hostId: string,
  ownerId: string,
  extra: { workspace?: Record<string, string>; tokenId?: string } = {},
) {
  return createSession({
    id,
    hostId,
    model: { provider: "scripted", script: [] },
    tools: [],
    metadata: {},
    ownerId,
    created: { model: { provider: "scripted" }, tools: [], hostId },
    ...extra,
  });
}

/** Runs one write in a transaction of its own, outside any writer (so many can run concurrently). */
export function runAlone<T>(sql: Sql, op: WriteOp<T>): Promise<T> {
  return sql.begin((tx) => op.run(tx)) as Promise<T>;
}

/** A host row and a stopped server: what takeover tests hang their orphaned sessions on. */
export async function hostAndStoppedServer(sql: Sql): Promise<{ hostId: string; gone: string }> {
  const hostId = randomUUID();
  const gone = randomUUID();
  await sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
  await registerServer(sql, gone);
  await stopServer(sql, gone);
  return { hostId, gone };
}
