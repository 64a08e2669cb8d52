/**
 * A revoked application token loses what it holds open, on every server: host sockets of its hosts
 * and named-host replicas, event streams, waiting MCP requests. Authentication refuses its next
 * request anyway; this ends what it opened before. Each server looks every heartbeat (and the one
 * that revoked it at once) for revoked owners among its own open sockets and streams: one query,
 * and only while an application token holds something open here.
 */
import { revokedAmong } from "@aexhq/brain-db/ops";
import type { HostConnection } from "./hosts/connection.js";
import type { HostRegistry } from "./hosts/registry.js";
import type { OwnedStreams } from "./owned-streams.js";
import type { Services } from "./services.js";

/** The close code a revoked token's host socket gets (an application-defined 4xxx code). */
export const REVOKED_CLOSE_CODE = 4401;

export async function closeRevoked(
  rt: Pick<Services, "sql" | "log"> & { hosts: HostRegistry<HostConnection>; streams: OwnedStreams },
): Promise<void> {
  const owners = rt.streams.owners();
  for (const conn of rt.hosts.all()) if (conn.ownerTokenId !== null) owners.add(conn.ownerTokenId);
  if (owners.size === 0) return;
  const revoked = await revokedAmong(rt.sql, [...owners]);
  if (revoked.size === 0) return;
  let sockets = 0;
  for (const conn of rt.hosts.all()) {
    if (conn.ownerTokenId !== null && revoked.has(conn.ownerTokenId)) {
      conn.close(REVOKED_CLOSE_CODE, "token revoked");
      sockets++;
    }
  }
  const streams = rt.streams.end(revoked);
  rt.log.info({ tokens: [...revoked], sockets, streams }, "closed what revoked application tokens held open");
}
