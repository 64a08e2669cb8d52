import { type Periodic, periodic } from "@aexhq/brain-contracts";
import type { ToolModelCalls } from "@aexhq/brain-core/models";
import {
  type CommitFanout,
  type CommitListener,
  channelFor,
  listenForCommits,
  liveChannelFor,
  Touch,
} from "@aexhq/brain-db/commits";
import { lanesHoldSessions } from "@aexhq/brain-db/connect";
import { CommitPoller } from "./commit-poller.js";
import type { HostConnection } from "./hosts/connection.js";
import type { Dispatcher } from "./hosts/dispatch.js";
import type { HostRegistry } from "./hosts/registry.js";
import type { ActorRegistry } from "./loop/actors.js";
import type { Services } from "./services.js";

/** How often a server that cannot LISTEN looks for what moved. */
export const POLL_MS = 1000;
/** How long the NOTIFY sent at start may take to reach this server's LISTEN. */
const PROBE_MS = 3000;

export type WakeupDeps = Pick<
  Services,
  "serverId" | "config" | "sql" | "bus" | "log" | "availability" | "metrics" | "live"
> & {
  actors: ActorRegistry;
  hosts: HostRegistry<HostConnection>;
  dispatch: Dispatcher;
  toolModels: Pick<ToolModelCalls, "stopEnded">;
  commits: CommitFanout;
};

export interface Wakeups {
  /** True while the LISTEN connection is in place, or while polling (nothing to wait for). */
  readonly listening: boolean;
  /** Whether wake-ups fall back to polling. */
  readonly polling: boolean;
  stop(): Promise<void>;
}

/**
 * What wakes this server's sessions and hosts: commits announced on the bus (its own writer's,
 * and other processes' through LISTEN/NOTIFY), turned into work for the Agentloops, the host
 * connections and the tool model calls. Where LISTEN cannot deliver (a transaction pooler with no
 * direct URL, or a NOTIFY sent at start that never arrives) it polls (commit-poller.ts).
 */
export async function startWakeups(rt: WakeupDeps): Promise<Wakeups> {
  wireBus(rt);
  let poller: Periodic | undefined;
  let listener: CommitListener | undefined;
  const poll = (why: string) => {
    rt.log.warn(
      { pollMs: POLL_MS },
      `LISTEN/NOTIFY does not deliver here (${why}): wake-ups fall back to polling, the journals this server serves looked at every second`,
    );
    poller = startPolling(rt);
  };
  // Through a transaction-mode pooler without a direct URL, a LISTEN would stay on whichever
  // backend ran it, and the pooler would hand its notifications to other clients: none is made.
  if (!lanesHoldSessions(rt.sql))
    poll("DATABASE_URL goes through a transaction-mode pooler; BRAIN_DIRECT_URL is not set");
  else {
    listener = await listenForCommits(
      rt.sql,
      channelFor(rt.config.schema),
      rt.serverId,
      (keys, origin) => {
        rt.metrics.notified();
        rt.bus.deliver(keys);
        rt.commits.publish(keys, origin);
      },
      () => {
        rt.bus.rescan();
        rt.commits.reconnected();
      },
      { channel: liveChannelFor(rt.config.schema), onPayload: (payload) => rt.live.receive(payload) },
    );
    if (!(await listener.probe(PROBE_MS))) poll("is DATABASE_URL a transaction-mode pooler?");
  }
  return {
    get listening() {
      return poller !== undefined || listener?.listening === true;
    },
    get polling() {
      return poller !== undefined;
    },
    async stop() {
      await poller?.stop();
      await listener?.unlisten();
    },
  };
}

/** What each kind of commit wakes. */
function wireBus(rt: WakeupDeps): void {
  const { bus, log } = rt;
  bus.onAnySession((id, bits, records) => {
    rt.actors.onCommit(id, bits, records);
    // A call that ended stops its model requests (a no-op without requests in flight).
    if (bits & (Touch.observation | Touch.ended)) {
      void rt.toolModels.stopEnded([id]).catch((err) => log.warn({ err }, "checking model requests failed"));
    }
  });
  bus.onHost((hostId) => {
    for (const conn of rt.hosts.claimants(hostId)) {
      void rt.dispatch.claimFor(conn).catch((err) => log.error({ err }, "claiming calls failed"));
    }
    for (const c of rt.hosts.ofHost(hostId)) void c.reconcile().catch((err) => log.warn({ err }, "reconcile failed"));
  });
  bus.onRelease((sessionId, hostId) => {
    for (const c of rt.hosts.ofHost(hostId)) c.release(sessionId);
  });
  bus.onRescan(() => {
    rt.actors.kickAll();
    for (const conn of rt.hosts.all()) void rt.dispatch.claimFor(conn).catch(() => {});
  });
}

function startPolling(rt: WakeupDeps): Periodic {
  const polled = new CommitPoller(rt.sql, rt.bus, {
    actors: () => rt.actors.ids(),
    resident: (id) => rt.actors.get(id) !== undefined,
    hosts: () => rt.hosts.hostIds(),
    served: () => rt.hosts.served(),
    resumeParked: () => rt.actors.resumeAhead(),
  });
  return periodic(
    async () => {
      // The commit feed's subscribers (brain start's worker) look again, as after a LISTEN's return.
      rt.commits.reconnected();
      await polled.tick();
    },
    POLL_MS,
    { onError: (err) => rt.availability.warnUnlessAway(err, () => rt.log.warn({ err }, "polling failed")) },
  );
}
