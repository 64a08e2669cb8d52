import { randomUUID } from "node:crypto";
import {
  channelFor,
  endCalls,
  heartbeat,
  JournalWriter,
  listenForCommits,
  registerServer,
  SecretBox,
  type Sql,
  startBoss,
  stopServer,
  Touch,
} from "@aexhq/brain-db";
import type { FastifyBaseLogger } from "fastify";
import type { PgBoss } from "pg-boss";
import { CommitBus } from "./bus.js";
import type { Config } from "./config.js";
import { Dispatcher } from "./hosts/dispatch.js";
import { HostRegistry } from "./hosts/registry.js";
import { ActorRegistry } from "./loop/actors.js";
import { DeadlineJobs } from "./loop/deadline-jobs.js";
import { TurnNotices } from "./loop/turns.js";
import { ToolModelCalls } from "./models/tool-model-calls.js";
import { sweep } from "./recovery.js";

/** Everything a Brain server process runs besides HTTP: shared by routes, hosts and the loop. */
export interface Runtime {
  readonly serverId: string;
  readonly config: Config;
  readonly sql: Sql;
  readonly writer: JournalWriter;
  readonly bus: CommitBus;
  readonly hosts: HostRegistry;
  readonly dispatch: Dispatcher;
  readonly actors: ActorRegistry;
  readonly deadlineJobs: DeadlineJobs;
  readonly boss: PgBoss;
  readonly log: FastifyBaseLogger;
  /** Seals and opens session secrets (provider keys, Environment headers) under BRAIN_SECRET_KEY. */
  readonly secrets: SecretBox;
  /** Model calls of the tools whose host connections are on this server (ctx.model). */
  readonly toolModels: ToolModelCalls;
  /** Ended activations, announced in-process by the actors that wrote them. */
  readonly turns: TurnNotices;
  /** Open event streams, ended when the server shuts down. */
  readonly streams: Set<() => void>;
  /** Aborted when the server starts shutting down: requests waiting on a turn give up. */
  readonly closing: AbortSignal;
}

export interface RunningRuntime extends Runtime {
  /** Lets long-lived requests and sockets go, so the HTTP server can close. */
  beginShutdown(): void;
  stop(): Promise<void>;
}

const HEARTBEAT_MS = 1000;

export async function startRuntime(
  config: Config,
  sql: Sql,
  databaseUrl: string,
  log: FastifyBaseLogger,
): Promise<RunningRuntime> {
  const serverId = randomUUID();
  const closing = new AbortController();
  const bus = new CommitBus();
  const channel = channelFor(config.schema);
  const writer = new JournalWriter(sql, { channel, origin: serverId, onCommit: (keys) => bus.deliver(keys) });
  const boss = await startBoss(databaseUrl, config.schema, (err) => log.warn({ err }, "pg-boss error"));
  const deadlineJobs = new DeadlineJobs(boss, writer);
  const secrets = new SecretBox(config.secretKey);
  await deadlineJobs.startWorker((err) => log.warn({ err }, "deadline backstop failed"));
  const partial = {
    serverId,
    config,
    sql,
    writer,
    bus,
    hosts: new HostRegistry(),
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
    }),
    streams: new Set<() => void>(),
    closing: closing.signal,
    turns: new TurnNotices(),
  } as const;
  const rt: Runtime = Object.assign(partial, {
    dispatch: undefined as unknown as Dispatcher,
    actors: undefined as unknown as ActorRegistry,
  });
  Object.assign(rt, { dispatch: new Dispatcher(rt), actors: new ActorRegistry(rt) });

  await registerServer(sql, serverId);
  bus.onAnySession((id, bits) => {
    rt.actors.onCommit(id, bits);
    // A call that ended stops its model requests (a no-op without requests in flight).
    if (bits & (Touch.observation | Touch.ended)) {
      void rt.toolModels.stopEnded([id]).catch((err) => log.warn({ err }, "checking model requests failed"));
    }
  });
  bus.onHost((hostId) => {
    const conn = rt.hosts.current(hostId);
    if (conn) void rt.dispatch.claimFor(conn).catch((err) => log.error({ err }, "claiming calls failed"));
    for (const c of rt.hosts.ofHost(hostId)) void c.reconcile().catch((err) => log.warn({ err }, "reconcile failed"));
  });
  bus.onRelease((sessionId, hostId) => {
    for (const c of rt.hosts.ofHost(hostId)) c.release(sessionId);
  });
  bus.onRescan(() => {
    rt.actors.kickAll();
    for (const conn of rt.hosts.all()) void rt.dispatch.claimFor(conn).catch(() => {});
  });
  const listener = await listenForCommits(
    sql,
    channel,
    serverId,
    (keys) => bus.deliver(keys),
    () => bus.rescan(),
  );

  let sweeping = false;
  const tick = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      await heartbeat(sql, serverId);
      await rt.toolModels.stopEnded();
      await sweep(rt);
    } catch (err) {
      log.warn({ err }, "heartbeat or recovery sweep failed");
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void tick(), HEARTBEAT_MS);
  await tick();

  return Object.assign(rt, {
    beginShutdown() {
      if (closing.signal.aborted) return;
      closing.abort();
      for (const end of [...rt.streams]) end();
      for (const conn of rt.hosts.all()) conn.close();
    },
    async stop() {
      clearInterval(timer);
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
      await bounded(listener.unlisten(), 2000);
      await bounded(stopServer(sql, serverId), 2000);
    },
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
