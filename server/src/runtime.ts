import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { periodic } from "@aexhq/brain-contracts";
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
  heartbeat,
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
import { sweep } from "./recovery.js";
import { ReplicaLagSampler } from "./replica-lag.js";
import { startRetention } from "./retention.js";
import { closeRevoked } from "./revocation.js";
import type { Services } from "./services.js";
import { startTraceExporter } from "./traces/exporter.js";
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

const HEARTBEAT_MS = 1000;
/** No heartbeat committed for this long: the writer cannot commit, and the server is not ready. */
export const COMMIT_STALL_MS = 10_000;

export async function startRuntime(config: Config, sql: Sql, log: FastifyBaseLogger): Promise<RunningRuntime> {
  const serverId = randomUUID();
  // LISTEN, or polling where it cannot deliver; in place before the first request.
  let wakeups: Wakeups | undefined;
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
      : new PrometheusMetrics(
          {
            *loops() {
              for (const a of actorsRef?.all() ?? [])
                yield { open: a.state.open.size, turn: a.state.activation !== null };
            },
            parked: () => actorsRef?.parkedCount ?? 0,
            *connections() {
              for (const c of hostsRef?.all() ?? [])
                yield { kind: c.replicaId === null ? "host" : "replica", pending: c.pendingCalls };
            },
            polling: () => wakeups?.polling === true,
            replicaLag: () => lag.current,
          },
          { replica: readSql !== sql },
        );
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
      committing: performance.now() - lastCommit < COMMIT_STALL_MS,
    }),
    commits,
  };

  await registerServer(sql, serverId);
  wakeups = await startWakeups({ ...rt, commits });

  // The heartbeat beats on its own, never behind the sweep: a sweep can take longer than the
  // stale window (it resumes orphaned sessions for up to 2 s, and waits for any claim held up on a
  // locked session row), and a heartbeat held behind it would let another server judge this live
  // one dead, take its sessions in the middle of their model calls and end its calls unknown.
  // The heartbeat is this server's commit probe: an UPDATE that commits every beat.
  let lastCommit = performance.now();
  const beats = periodic(
    async () => {
      const started = performance.now();
      const { verdict, at } = await heartbeat(sql, serverId);
      lastCommit = performance.now();
      if (verdict === "revived") revive(rt);
      availability.markAvailable();
      liveness.beat(at);
      lag.sample();
      // Others judge this server by these beats: one this slow is close to a wrong verdict.
      const ms = Math.round(performance.now() - started);
      if (ms > HEARTBEAT_MS) log.warn({ ms }, "a heartbeat took longer than the interval between beats");
    },
    HEARTBEAT_MS,
    {
      onError: (err) => {
        if (!availability.observe(err)) log.warn({ err }, "heartbeat failed");
      },
      keepsAlive: true,
    },
  );
  const sweeps = periodic(() => recoverySweep(rt), HEARTBEAT_MS, {
    onError: (err) => {
      if (!availability.observe(err)) log.warn({ err }, "recovery sweep failed");
    },
    keepsAlive: true,
  });
  await beats.run();
  await sweeps.run();
  const stopRetention = startRetention(rt);
  // Off (nothing runs) unless an OTLP endpoint is configured.
  const traces = startTraceExporter(rt);

  return Object.assign(rt, {
    beginShutdown() {
      if (closing.signal.aborted) return;
      closing.abort();
      rt.streams.end();
      for (const conn of rt.hosts.all()) conn.close();
    },
    async stop() {
      void beats.stop();
      void sweeps.stop();
      stopRetention();
      await bounded(traces?.stop() ?? Promise.resolve(), 3000);
      await bounded(rt.actors.markIdleOnShutdown(), 2000);
      rt.actors.stopAll();
      // Requests in flight are interrupted: journaled `unknown`, never replayed.
      await rt.toolModels.stopAll();
      for (const conn of rt.hosts.all()) conn.close();
      // Calls dispatched on our connections can no longer report: they end unknown now, rather
      // than when another server notices we are gone.
      await writer
        .submit(endCalls({ serverId }, { status: "unknown", cause: "connection_lost" }))
        .catch((err) => log.warn({ err }, "could not end calls on shutdown"));
      await writer.close();
      // A shutdown must end: each remaining step gets a bounded wait.
      await bounded(boss.stop({ graceful: false, timeout: 2000 }), 3000);
      await bounded(wakeups?.stop() ?? Promise.resolve(), 2000);
      availability.close();
      await bounded(stopServer(sql, serverId), 2000);
      if (readSql !== sql) await bounded(readSql.end({ timeout: 1 }), 2000);
      await egress.close();
    },
  });
}

/**
 * Another server declared this one dead while it was cut off: its host connections were closed and
 * their calls ended `unknown` in the journal. The sockets are dropped so the hosts reconnect and
 * get connections that count again, and every actor re-reads its journal (one whose session was
 * taken over finds its next write fenced and stops).
 */
function revive(rt: Runtime): void {
  rt.log.warn({ serverId: rt.serverId }, "declared dead while cut off from the database: rejoining");
  for (const conn of rt.hosts.all()) conn.close(1012, "server rejoining");
  rt.actors.kickAll();
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

/** What a server does every heartbeat besides beating: repairs, recovery, revocation, fair shares. */
async function recoverySweep(rt: Runtime): Promise<void> {
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
    await rt.dispatch.claimFor(conn).catch((err) => {
      if (!rt.availability.observe(err)) rt.log.warn({ err }, "claiming a named host's calls failed");
    });
  }
}
