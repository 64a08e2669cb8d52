/**
 * The worker's identity in the database. It registers like a server (kind "worker") and holds one
 * connection row that its claimed calls are dispatched on. It heartbeats every second; a worker
 * silent for 3 s is declared dead by the servers' recovery sweep, which ends its open calls
 * `unknown` (`worker_lost`). A worker that finds itself declared dead while still alive (a long
 * pause, a network partition) stops what it was running, which no longer counts, and registers
 * again under a new identity.
 */
import { randomUUID } from "node:crypto";
import type { Sql } from "@aexhq/brain-db/connect";
import { heartbeatAlive, openConnection, registerServer } from "@aexhq/brain-db/ops";

export interface Identity {
  workerId: string;
  connectionId: string;
}

export async function register(sql: Sql): Promise<Identity> {
  const workerId = randomUUID();
  const connectionId = randomUUID();
  await registerServer(sql, workerId, "worker");
  await openConnection(sql, connectionId, null, workerId);
  return { workerId, connectionId };
}

/** Heartbeats; false when this worker has been declared dead (its row is stopped or gone). */
export function beat(sql: Sql, workerId: string): Promise<boolean> {
  return heartbeatAlive(sql, workerId);
}
