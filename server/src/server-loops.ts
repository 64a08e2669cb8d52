import { periodic } from "@aexhq/brain-contracts";
import type { ToolModelCalls } from "@aexhq/brain-core/models";
import { heartbeat } from "@aexhq/brain-db/ops";
import type { HostConnection } from "./hosts/connection.js";
import type { Dispatcher } from "./hosts/dispatch.js";
import type { HostRegistry } from "./hosts/registry.js";
import { startPartitionUpkeep } from "./journal-partitions.js";
import type { Liveness } from "./liveness.js";
import type { ActorRegistry } from "./loop/actors.js";
import type { OwnedStreams } from "./owned-streams.js";
import { sweep } from "./recovery.js";
import type { ReplicaLagSampler } from "./replica-lag.js";
import { startRetention } from "./retention.js";
import { closeRevoked } from "./revocation.js";
import type { Services } from "./services.js";
import { startTraceExporter } from "./traces/exporter.js";

/** What a server's periodic work uses: the services, with the concrete classes it drives. */
export type LoopDeps = Omit<Services, "hosts" | "dispatch" | "actors" | "toolModels"> & {
  readonly hosts: HostRegistry<HostConnection>;
  readonly dispatch: Dispatcher;
  readonly actors: ActorRegistry;
  readonly toolModels: ToolModelCalls;
  readonly streams: OwnedStreams;
};

export interface ServerLoops {
  /** When a heartbeat last committed (performance.now()): readiness's commit probe. */
  lastCommit(): number;
  stop(): Promise<void>;
}

export const HEARTBEAT_MS = 1000;

/**
 * Starts what a server does on its own, not asked: the heartbeat, the recovery sweep (both run
 * once before this returns), retention and trace export. The heartbeat beats on its own, never
 * behind the sweep: a sweep can take longer than the stale window (it resumes orphaned sessions
 * for up to 2 s, and waits for any claim held up on a locked session row), and a heartbeat held
 * behind it would let another server judge this live one dead, take its sessions in the middle of
 * their model calls and end its calls unknown.
 */
export async function startServerLoops(
  rt: LoopDeps,
  /** What each beat feeds: the verdicts on other servers, and the replica's lag. */
  { liveness, lag }: { liveness: Liveness; lag: ReplicaLagSampler },
): Promise<ServerLoops> {
  // The heartbeat is this server's commit probe: an UPDATE that commits every beat.
  let lastCommit = performance.now();
  const beats = periodic(
    async () => {
      const started = performance.now();
      const { verdict, at } = await heartbeat(rt.sql, rt.serverId);
      lastCommit = performance.now();
      if (verdict === "revived") revive(rt);
      rt.availability.markAvailable();
      liveness.beat(at);
      lag.sample();
      // Others judge this server by these beats: one this slow is close to a wrong verdict.
      const ms = Math.round(performance.now() - started);
      if (ms > HEARTBEAT_MS) rt.log.warn({ ms }, "a heartbeat took longer than the interval between beats");
    },
    HEARTBEAT_MS,
    { onError: (err) => warnUnlessAway(rt, err, "heartbeat failed"), keepsAlive: true },
  );
  const sweeps = periodic(() => recoverySweep(rt), HEARTBEAT_MS, {
    onError: (err) => warnUnlessAway(rt, err, "recovery sweep failed"),
    keepsAlive: true,
  });
  await beats.run();
  await sweeps.run();
  const stopRetention = startRetention(rt);
  const stopPartitions = startPartitionUpkeep(rt);
  // Off (nothing runs) unless an OTLP endpoint is configured.
  const traces = startTraceExporter(rt);
  return {
    lastCommit: () => lastCommit,
    async stop() {
      void beats.stop();
      void sweeps.stop();
      stopRetention();
      stopPartitions();
      await traces?.stop();
    },
  };
}

function warnUnlessAway(rt: Pick<Services, "availability" | "log">, err: unknown, message: string): void {
  rt.availability.warnUnlessAway(err, () => rt.log.warn({ err }, message));
}

/**
 * Another server declared this one dead while it was cut off: its host connections were closed and
 * their calls ended `unknown` in the journal. The sockets are dropped so the hosts reconnect and
 * get connections that count again, and every actor re-reads its journal (one whose session was
 * taken over finds its next write fenced and stops).
 */
function revive(rt: LoopDeps): void {
  rt.log.warn({ serverId: rt.serverId }, "declared dead while cut off from the database: rejoining");
  for (const conn of rt.hosts.all()) conn.close(1012, "server rejoining");
  rt.actors.kickAll();
}

/** What a server does every heartbeat besides beating: repairs, recovery, revocation, fair shares. */
async function recoverySweep(rt: LoopDeps): Promise<void> {
  await rt.actors.parkIdle();
  await rt.repairs.run();
  await rt.toolModels.stopEnded();
  // What a token revoked on any server held open here goes within a heartbeat.
  await closeRevoked(rt);
  // After an outage every process's heartbeat is stale at once: liveness.ts keeps the first
  // server back from declaring the others dead, or taking their sessions, before they beat.
  await sweep(rt);
  // The backstop of named hosts' fair shares: a share left for a replica whose server missed
  // the notification, or that is gone, is taken by the others within a heartbeat.
  for (const conn of rt.hosts.all()) {
    if (conn.replicaId === null) continue;
    await rt.dispatch.claimFor(conn).catch((err) => warnUnlessAway(rt, err, "claiming a named host's calls failed"));
  }
}
