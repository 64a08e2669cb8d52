import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { Egress } from "@aexhq/brain-core/egress";
import { ToolModelCalls } from "@aexhq/brain-core/models";
import type { CommitFeed } from "@aexhq/brain-db/commits";
import { CommitFanout, channelFor, liveChannelFor, notifyLive } from "@aexhq/brain-db/commits";
import { connect, DatabaseAvailability, type Sql } from "@aexhq/brain-db/connect";
import { endOverdueCalls } from "@aexhq/brain-db/ops";
import { type CreatedBoss, createBoss } from "@aexhq/brain-db/queue";
import { InvocationSigner, SecretBox } from "@aexhq/brain-db/secrets";
import { JournalWriter, PendingRepairs } from "@aexhq/brain-db/writer";
import type { FastifyBaseLogger } from "fastify";
import { CommitBus } from "./bus.js";
import type { Config } from "./config.js";
import type { HostConnection } from "./hosts/connection.js";
import { Dispatcher } from "./hosts/dispatch.js";
import { HostRegistry } from "./hosts/registry.js";
import { LiveText } from "./live-text.js";
import { Liveness } from "./liveness.js";
import { ActorRegistry } from "./loop/actors.js";
import { DeadlineJobs } from "./loop/deadline-jobs.js";
import { TurnNotices } from "./loop/turns.js";
import { PrometheusMetrics } from "./metrics/prometheus.js";
import { type Metrics, noMetrics } from "./metrics/sink.js";
import { OwnedStreams } from "./owned-streams.js";
import { Quotas } from "./quotas.js";
import { ReplicaLagSampler } from "./replica-lag.js";
import { HEARTBEAT_MS, type ServerLoops } from "./server-loops.js";
import type { Services } from "./services.js";
import type { Wakeups } from "./wakeups.js";

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

/** No heartbeat committed for this long: the writer cannot commit, and the server is not ready. */
export const COMMIT_STALL_MS = 10_000;

/** What starts after the build (runtime.ts), read by readiness and the gauges once it has. */
export interface Started {
  wakeups?: Wakeups;
  loops?: ServerLoops;
}

export interface BuiltRuntime {
  rt: Runtime;
  started: Started;
  /** pg-boss, made but not started. */
  boss: CreatedBoss;
  lag: ReplicaLagSampler;
  liveness: Liveness;
  egress: Egress;
  /** `rt.commits`, as the publisher LISTEN feeds (wakeups.ts). */
  commits: CommitFanout;
  closing: AbortController;
}

/**
 * A server's runtime, built and wired: every service, and nothing running. No I/O happens here
 * (pools connect on first use); startRuntime starts what runs. What is asked of the database
 * first: whether pg-boss may install its schema, and whether the tables are distributed on Citus.
 */
export function buildRuntime(
  config: Config,
  sql: Sql,
  log: FastifyBaseLogger,
  db: { mayMigrate: boolean; distributed: boolean },
): BuiltRuntime {
  const serverId = randomUUID();
  const started: Started = {};
  // The availability handler and the gauges act on the runtime once it exists.
  let built: Runtime | undefined;
  const closing = new AbortController();
  // Every request waiting on a journal and every running Environment call listens for the
  // shutdown: hundreds at once are normal, and Node's leak warning past ten would be a false alarm.
  setMaxListeners(0, closing.signal);
  const bus = new CommitBus();
  const commits = new CommitFanout();
  // Reads that may lag go to BRAIN_READ_URL's replica; its lag is sampled each heartbeat.
  const readSql = config.readUrl
    ? connect(config.readUrl, { schema: config.schema, max: 5, applicationName: "brain-read", readOnly: true })
    : sql;
  const lag = new ReplicaLagSampler(sql, readSql, log);
  const prometheus = config.metrics === "off" ? null : serverMetrics(() => built, started, lag, readSql !== sql);
  const metrics: Metrics = prometheus ?? noMetrics;
  const availability = new DatabaseAvailability(sql, {
    onChange: (available) => built && availabilityChanged(built, liveness, available),
  });
  const liveness = new Liveness(() => availability.upFor(), HEARTBEAT_MS);
  const egress = new Egress({ allow: config.egress.allow, proxy: config.egress.proxy });
  const writer = new JournalWriter(sql, {
    channel: channelFor(config.schema),
    origin: serverId,
    onCommit: (keys, written) => {
      bus.deliver(keys, written);
      commits.publish(keys, serverId);
    },
    availability,
    citus: db.distributed,
    ...(prometheus ? { observer: (flush) => metrics.flushed(flush) } : {}),
  });
  // The server works only the deadline queue, which is polled (its jobs are deferred), and sends
  // worker jobs: pg-boss's LISTEN would only be woken, on every journal commit, for nothing. A
  // runtime role that may not migrate leaves pg-boss's schema (and its background DDL) alone.
  const onBossError = (err: unknown) => {
    availability.observe(err);
    log.warn({ err }, "pg-boss error");
  };
  const boss = createBoss(sql, config.schema, onBossError, { listen: false, migrate: db.mayMigrate });
  const live = new LiveText({
    origin: serverId,
    notify: (payload) => notifyLive(sql, liveChannelFor(config.schema), payload),
    onError: (err) => availability.warnUnlessAway(err, (e) => log.warn({ err: e }, "publishing live text failed")),
  });
  const distributed = db.distributed;
  const base = {
    config,
    sql,
    readSql,
    log,
    serverId,
    distributed,
    bus,
    commits,
    availability,
    writer,
    metrics,
    prometheus,
    live,
  };
  built = wireServices({ ...base, boss: boss.boss, closing: closing.signal, liveness, egress, started });
  return { rt: built, started, boss, lag, liveness, egress, commits, closing };
}

type Base = Pick<
  Runtime,
  | "config"
  | "sql"
  | "readSql"
  | "log"
  | "serverId"
  | "distributed"
  | "bus"
  | "commits"
  | "availability"
  | "writer"
  | "metrics"
  | "prometheus"
  | "boss"
  | "closing"
  | "liveness"
  | "egress"
  | "live"
>;

/** The services over the journal's parts, in the order they need each other. */
function wireServices(base: Base & { started: Started }): Runtime {
  const { config, sql, writer, serverId, availability, liveness, egress, started } = base;
  const deadlineJobs = new DeadlineJobs(base.boss, writer);
  const secrets = new SecretBox(config.secretKeys);
  const modelTransport = { fetch: egress.fetch, maxAnswerBytes: config.maxUpstreamBytes };
  const quotas = new Quotas(sql, config.quotas);
  const hosts = new HostRegistry<HostConnection>();
  const turns = new TurnNotices();
  const repairs = new PendingRepairs((err, key) => base.log.error({ err, key }, "a deferred journal write failed"));
  // The dispatcher needs none of the actors, the actors need the dispatcher: built in that order.
  const dispatch = new Dispatcher({ config, hosts, writer, liveness, distributed: base.distributed });
  const shared = { ...base, deadlineJobs, dispatch, turns, secrets, modelTransport, quotas };
  const actors = new ActorRegistry(shared);
  const toolModels = new ToolModelCalls({
    sql,
    writer,
    secrets,
    runnerId: () => serverId,
    maxModelCalls: config.maxModelCalls,
    transport: modelTransport,
  });
  return {
    ...shared,
    hosts,
    actors,
    toolModels,
    repairs,
    invocations: new InvocationSigner(secrets),
    streams: new OwnedStreams(),
    readiness: () => ({
      database: availability.available,
      listening: started.wakeups?.listening === true,
      committing: !started.loops || performance.now() - started.loops.lastCommit() < COMMIT_STALL_MS,
    }),
  };
}

/** The database went away or came back. */
function availabilityChanged(rt: Runtime, liveness: Liveness, available: boolean): void {
  if (!available) {
    liveness.away();
    rt.log.warn("database unavailable: requests fail with database_unavailable until it answers");
    return;
  }
  rt.log.info("database available again: re-reading journals and open calls");
  // Whatever failed to commit meanwhile is found again from the tables; first, sessions whose
  // journal the database lost the end of (a fail-over) are read again from what it has.
  void restartBehind(rt).finally(() => rt.bus.rescan());
  void rt.writer
    .submit(endOverdueCalls())
    .catch((err) => rt.log.warn({ err }, "ending overdue calls after the outage failed"));
}

async function restartBehind(rt: Runtime): Promise<void> {
  try {
    const behind = await rt.actors.restartBehind();
    if (behind.length > 0) {
      rt.log.error(
        { sessions: behind.length, sample: behind.slice(0, 5) },
        "the database lost committed records of sessions this server ran (a fail-over to a standby that lacked them): their Agentloops go on from the journal it has",
      );
    }
  } catch (err) {
    rt.availability.warnUnlessAway(err, () => rt.log.warn({ err }, "checking journals after the outage failed"));
  }
}

/** The server's Prometheus metrics; the gauges read the actors and host sockets when scraped. */
function serverMetrics(
  runtime: () => Runtime | undefined,
  started: Started,
  lag: ReplicaLagSampler,
  replica: boolean,
): PrometheusMetrics {
  return new PrometheusMetrics(
    {
      *loops() {
        for (const a of runtime()?.actors.all() ?? [])
          yield { open: a.state.open.size, turn: a.state.activation !== null };
      },
      parked: () => runtime()?.actors.parkedCount ?? 0,
      *connections() {
        for (const c of runtime()?.hosts.all() ?? [])
          yield { kind: c.replicaId === null ? "host" : "replica", pending: c.pendingCalls };
      },
      polling: () => started.wakeups?.polling === true,
      replicaLag: () => lag.current,
    },
    { replica },
  );
}
