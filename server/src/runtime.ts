import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { Egress } from "@aexhq/brain-core/egress";
import { ToolModelCalls } from "@aexhq/brain-core/models";
import {
  CommitFanout,
  type CommitFeed,
  channelFor,
  connect,
  DatabaseAvailability,
  endCalls,
  endOverdueCalls,
  InvocationSigner,
  JournalWriter,
  migrateRights,
  PendingRepairs,
  registerServer,
  SecretBox,
  type Sql,
  startBoss,
  stopServer,
} from "@aexhq/brain-db";
import type { FastifyBaseLogger } from "fastify";
import { CommitBus } from "./bus.js";
import type { Config } from "./config.js";
import type { HostConnection } from "./hosts/connection.js";
import { Dispatcher } from "./hosts/dispatch.js";
import { HostRegistry } from "./hosts/registry.js";
import { Liveness } from "./liveness.js";
import { ActorRegistry } from "./loop/actors.js";
import { DeadlineJobs } from "./loop/deadline-jobs.js";
import { TurnNotices } from "./loop/turns.js";
import { PrometheusMetrics } from "./metrics/prometheus.js";
import { type Metrics, noMetrics } from "./metrics/sink.js";
import { OwnedStreams } from "./owned-streams.js";
import { Quotas } from "./quotas.js";
import { ReplicaLagSampler } from "./replica-lag.js";
import { HEARTBEAT_MS, type ServerLoops, startServerLoops } from "./server-loops.js";
import type { Services } from "./services.js";
import { startWakeups, type Wakeups } from "./wakeups.js";

/**
 * Everything a Brain server process runs besides HTTP, as routes and app.ts see it: the services
 * (services.ts) with their concrete classes, built and wired here and nowhere else. Other modules
 * take `Pick<Services, …>` of what they use.
 */
export interface Runtime extends Services {
  readonly hosts: HostRegistry<HostConnection>;
  readonly dispatch: Dispatcher;
  readonly actors: ActorRegistry;
  readonly toolModels: ToolModelCalls;
  /** Open event streams and waiting MCP requests, ended at shutdown and when their token is revoked. */
  readonly streams: OwnedStreams;
  /** Signs invocations for applications' tool handlers; its public keys are GET /v1/keys. */
  readonly invocations: InvocationSigner;
  /** The Prometheus registry GET /metrics serves; null with BRAIN_METRICS=off. */
  readonly prometheus: PrometheusMetrics | null;
  /**
   * Ready to serve when all hold: the database answers, the LISTEN connection is in place, and a
   * write committed within COMMIT_STALL_MS (a primary waiting for a synchronous standby that is
   * gone answers queries but commits nothing).
   */
  readiness(): { database: boolean; listening: boolean; committing: boolean };
  /**
   * Every commit this server hears of, its own writer's included, for a worker in the same process
   * (`brain start`): one LISTEN for both.
   */
  readonly commits: CommitFeed;
}

export interface RunningRuntime extends Runtime {
  /** Lets long-lived requests and sockets go, so the HTTP server can close. */
  beginShutdown(): void;
  stop(): Promise<void>;
}

/** No heartbeat committed for this long: the writer cannot commit, and the server is not ready. */
export const COMMIT_STALL_MS = 10_000;

export async function startRuntime(config: Config, sql: Sql, log: FastifyBaseLogger): Promise<RunningRuntime> {
  const serverId = randomUUID();
  // LISTEN, or polling where it cannot deliver; in place before the first request.
  let wakeups: Wakeups | undefined;
  // The heartbeat and the sweeps, once the runtime is built (server-loops.ts).
  let loops: ServerLoops | undefined;
  const closing = new AbortController();
  // Every request waiting on a journal and every running Environment call listens for the
  // shutdown: hundreds at once are normal, and Node's leak warning past ten would be a false alarm.
  setMaxListeners(0, closing.signal);
  const bus = new CommitBus();
  const commits = new CommitFanout();
  const channel = channelFor(config.schema);
  // Gauges read the actors and host sockets when scraped; both exist by the first scrape.
  let actorsRef: ActorRegistry | undefined;
  let hostsRef: HostRegistry<HostConnection> | undefined;
  // Reads that may lag go to BRAIN_READ_URL's replica; its lag is sampled each heartbeat.
  const readSql = config.readUrl
    ? connect(config.readUrl, { schema: config.schema, max: 5, applicationName: "brain-read", readOnly: true })
    : sql;
  const lag = new ReplicaLagSampler(sql, readSql, log);
  const prometheus =
    config.metrics === "off"
      ? null
      : serverMetrics({ actors: () => actorsRef, hosts: () => hostsRef, wakeups: () => wakeups, lag }, readSql !== sql);
  const metrics: Metrics = prometheus ?? noMetrics;
  const availability = new DatabaseAvailability(sql, {
    onChange: (available) => {
      if (!available) {
        liveness.away();
        return log.warn("database unavailable: requests fail with database_unavailable until it answers");
      }
      log.info("database available again: re-reading journals and open calls");
      // Whatever failed to commit meanwhile is found again from the tables; first, sessions whose
      // journal the database lost the end of (a fail-over) are read again from what it has.
      void restartBehind().finally(() => bus.rescan());
      void writer
        .submit(endOverdueCalls())
        .catch((err) => log.warn({ err }, "ending overdue calls after the outage failed"));
    },
  });
  const liveness = new Liveness(() => availability.upFor(), HEARTBEAT_MS);
  const restartBehind = async () => {
    try {
      const behind = (await actorsRef?.restartBehind()) ?? [];
      if (behind.length > 0) {
        log.error(
          { sessions: behind.length, sample: behind.slice(0, 5) },
          "the database lost committed records of sessions this server ran (a fail-over to a standby that lacked them): their Agentloops go on from the journal it has",
        );
      }
    } catch (err) {
      if (!availability.observe(err)) log.warn({ err }, "checking journals after the outage failed");
    }
  };
  const writer = new JournalWriter(sql, {
    channel,
    origin: serverId,
    onCommit: (keys, written) => {
      bus.deliver(keys, written);
      commits.publish(keys, serverId);
    },
    availability,
    ...(prometheus ? { observer: (flush) => metrics.flushed(flush) } : {}),
  });
  // The server works only the deadline queue, which is polled (its jobs are deferred), and sends
  // worker jobs: pg-boss's LISTEN would only be woken, on every journal commit, for nothing. A
  // runtime role that may not migrate leaves pg-boss's schema (and its background DDL) alone.
  const { may: mayMigrate } = await migrateRights(sql, config.schema);
  const boss = await startBoss(
    sql,
    config.schema,
    (err) => {
      availability.observe(err);
      log.warn({ err }, "pg-boss error");
    },
    { listen: false, migrate: mayMigrate },
  );
  const deadlineJobs = new DeadlineJobs(boss, writer);
  const secrets = new SecretBox(config.secretKeys);
  const egress = new Egress({ allow: config.egress.allow, proxy: config.egress.proxy });
  const modelTransport = { fetch: egress.fetch, maxAnswerBytes: config.maxUpstreamBytes };
  const quotas = new Quotas(sql, config.quotas);
  await deadlineJobs.startWorker((err) => {
    availability.observe(err);
    log.warn({ err }, "deadline backstop failed");
  });
  const hosts = new HostRegistry<HostConnection>();
  hostsRef = hosts;
  const turns = new TurnNotices();
  const repairs = new PendingRepairs((err, key) => log.error({ err, key }, "a deferred journal write failed"));
  // The dispatcher needs none of the actors, the actors need the dispatcher: built in that order.
  const dispatch = new Dispatcher({ config, hosts, writer, liveness });
  const actors = new ActorRegistry({
    availability,
    boss,
    config,
    deadlineJobs,
    dispatch,
    log,
    sql,
    turns,
    writer,
    serverId,
    secrets,
    metrics,
    liveness,
    modelTransport,
    quotas,
  });
  actorsRef = actors;
  const rt: Runtime = {
    serverId,
    config,
    sql,
    readSql,
    writer,
    bus,
    hosts,
    dispatch,
    actors,
    deadlineJobs,
    boss,
    log,
    secrets,
    toolModels: new ToolModelCalls({
      sql,
      writer,
      secrets,
      runnerId: () => serverId,
      maxModelCalls: config.maxModelCalls,
      transport: modelTransport,
    }),
    egress,
    modelTransport,
    quotas,
    invocations: new InvocationSigner(secrets),
    streams: new OwnedStreams(),
    closing: closing.signal,
    turns,
    availability,
    liveness,
    repairs,
    metrics,
    prometheus,
    readiness: () => ({
      database: availability.available,
      listening: wakeups?.listening === true,
      committing: !loops || performance.now() - loops.lastCommit() < COMMIT_STALL_MS,
    }),
    commits,
  };

  await registerServer(sql, serverId);
  wakeups = await startWakeups({ ...rt, commits });

  loops = await startServerLoops(rt, { liveness, lag });

  return Object.assign(rt, {
    beginShutdown() {
      if (closing.signal.aborted) return;
      closing.abort();
      rt.streams.end();
      for (const conn of rt.hosts.all()) conn.close();
    },
    stop: () => stopRuntime(rt, { loops, wakeups, boss, egress }),
  });
}

/** Waits for `work` at most `ms`; a failure or a timeout is ignored (used on shutdown only). */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** The server's Prometheus metrics; the gauges read the actors and host sockets when scraped. */
function serverMetrics(
  parts: {
    actors: () => ActorRegistry | undefined;
    hosts: () => HostRegistry<HostConnection> | undefined;
    wakeups: () => Wakeups | undefined;
    lag: ReplicaLagSampler;
  },
  replica: boolean,
): PrometheusMetrics {
  return new PrometheusMetrics(
    {
      *loops() {
        for (const a of parts.actors()?.all() ?? [])
          yield { open: a.state.open.size, turn: a.state.activation !== null };
      },
      parked: () => parts.actors()?.parkedCount ?? 0,
      *connections() {
        for (const c of parts.hosts()?.all() ?? [])
          yield { kind: c.replicaId === null ? "host" : "replica", pending: c.pendingCalls };
      },
      polling: () => parts.wakeups()?.polling === true,
      replicaLag: () => parts.lag.current,
    },
    { replica },
  );
}

/** A server's shutdown, each step bounded: its loops, its Agentloops and calls, then its connections. */
async function stopRuntime(
  rt: Runtime,
  parts: {
    loops: ServerLoops | undefined;
    wakeups: Wakeups | undefined;
    boss: { stop(options: { graceful: boolean; timeout: number }): Promise<unknown> };
    egress: Egress;
  },
): Promise<void> {
  const { loops, wakeups, boss, egress } = parts;
  await bounded(loops?.stop() ?? Promise.resolve(), 3000);
  await bounded(rt.actors.markIdleOnShutdown(), 2000);
  rt.actors.stopAll();
  // Requests in flight are interrupted: journaled `unknown`, never replayed.
  await rt.toolModels.stopAll();
  for (const conn of rt.hosts.all()) conn.close();
  // Calls dispatched on our connections can no longer report: they end unknown now, rather
  // than when another server notices we are gone.
  await rt.writer
    .submit(endCalls({ serverId: rt.serverId }, { status: "unknown", cause: "connection_lost" }))
    .catch((err) => rt.log.warn({ err }, "could not end calls on shutdown"));
  await rt.writer.close();
  // A shutdown must end: each remaining step gets a bounded wait.
  await bounded(boss.stop({ graceful: false, timeout: 2000 }), 3000);
  await bounded(wakeups?.stop() ?? Promise.resolve(), 2000);
  rt.availability.close();
  await bounded(stopServer(rt.sql, rt.serverId), 2000);
  if (rt.readSql !== rt.sql) await bounded(rt.readSql.end({ timeout: 1 }), 2000);
  await egress.close();
}
