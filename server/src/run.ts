import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CommitFeed } from "@aexhq/brain-db/commits";
import { databaseHosts, surviveLostConnections } from "@aexhq/brain-db/connect";
import { durability } from "@aexhq/brain-db/ops";
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import type { Config } from "./config.js";
import { prepareDatabase } from "./database.js";
import { devOperatorToken } from "./operator-token.js";

export interface RunningServer {
  url: string;
  /** The database the server uses (embedded or DATABASE_URL), for a worker in the same process. */
  databaseUrl: string;
  /** The commits the server hears of, for a worker in the same process (its LISTEN serves both). */
  commits: CommitFeed;
  close(): Promise<void>;
}

/**
 * Prepares the database (embedded when DATABASE_URL is unset), migrates it, listens, and prints
 * the banner. Entry points own the process: signals and exit codes.
 */
export async function runServer(config: Config): Promise<RunningServer> {
  const db = await prepareDatabase(config, () => {});
  let dev: ReturnType<typeof devOperatorToken> | null = null;
  let started: FastifyInstance | undefined;
  let address: string;
  try {
    dev = config.apiToken ? null : devOperatorToken(config.dataDir);
    started = await buildApp({ config, sql: db.sql, apiToken: config.apiToken ?? dev!.token });
    address = await started.listen({ host: config.host, port: config.port });
  } catch (error) {
    // A server that cannot listen (the port taken, say) gives back what it started, the embedded
    // Postgres included, so the process can end with the error.
    await started?.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }
  const app = started;
  const url = address.replace("[::1]", "localhost");
  const acks = await durability(db.sql);
  // One write, so a reader that saw the first line has the whole banner.
  const banner = [
    `Brain listening on ${url}`,
    `Postgres: ${db.embedded ? `embedded, under ${config.dataDir}/pg` : `DATABASE_URL (${databaseHosts(db.url).join(", ")})`}; schema ${config.schema}`,
    `Durability: synchronous_commit=${acks.synchronousCommit}: ${acks.meaning}`,
    `Console: ${url}/console/ (asks for the operator token)`,
  ];
  // The embedded database's generated password stays in its file (BRAIN_DATA_DIR/pg-password);
  // a cluster made before generated passwords has the fixed one, no secret, in its URL.
  if (db.embedded) {
    const url = new URL(db.url);
    const file = join(config.dataDir, "pg-password");
    const password = existsSync(file) ? `PGPASSWORD="$(cat ${file})" ` : "";
    if (password) url.password = "";
    const query = `SELECT session_id, seq, kind FROM ${config.schema}.journal LIMIT 10`;
    banner.push(`Database: ${password}psql "${url.href}" -c "${query}"`);
  }
  banner.push(`Egress: ${egressLine(config.egress)}`);
  if (config.traces) {
    // Where spans go, without what could be a credential (userinfo, query); headers never shown.
    const to = new URL(config.traces.url);
    banner.push(`Traces: OTLP ${config.traces.protocol} to ${to.origin}${to.pathname}`);
  }
  if (dev?.created) {
    // The operator asked for a generated token by not setting one: it is shown once, when made.
    banner.push(`Operator token (saved in ${dev.path}): ${dev.token}`);
    banner.push(`Try: export BRAIN_URL=${url} BRAIN_TOKEN=${dev.token}`);
  } else if (dev) {
    banner.push(`Operator token: saved in ${dev.path} (shown when it was generated)`);
    banner.push(`Try: export BRAIN_URL=${url} BRAIN_TOKEN="$(cat ${dev.path})"`);
  }
  process.stdout.write(`${banner.join("\n")}\n`);
  let closed: Promise<void> | undefined;
  return {
    url,
    databaseUrl: db.url,
    commits: app.brain.commits,
    close() {
      // The app's onClose hooks still write (calls lost with our connections): the pool goes last.
      closed ??= app.close().then(() => db.close());
      return closed;
    },
  };
}

/** What the server reaches beyond the public internet, as the banner says it. */
function egressLine(egress: Config["egress"]): string {
  const opened = egress.allow.map((rule) => rule.text).join(", ");
  const proxy = egress.proxy ? `; through the proxy ${new URL(egress.proxy).origin}` : "";
  if (egress.loopbackByDefault) {
    return `loopback open (${opened}): the embedded development default; BRAIN_EGRESS_ALLOW chooses otherwise${proxy}`;
  }
  return opened === ""
    ? `public addresses only; BRAIN_EGRESS_ALLOW opens internal ones${proxy}`
    : `public addresses and BRAIN_EGRESS_ALLOW (${opened})${proxy}`;
}

export interface SignalExit {
  /** Hands over the process's clean stop; a signal that came during startup runs it at once. */
  started(close: () => Promise<void>): void;
}

/**
 * SIGTERM/SIGINT run the process's `close` once, then exit 0 (or 1 if it fails or takes over
 * 10 s). Installed before anything starts: whoever reads the banner may signal at once (a pipe's
 * reader can run before the writer's next line), and a signal with no handler yet would kill the
 * process by default, skipping its clean stop. A signal during startup waits for `started`.
 */
export function exitOnSignals(log: (message: string) => void): SignalExit {
  surviveLostConnections(log);
  let close: (() => Promise<void>) | undefined;
  let signalled: string | undefined;
  let closing = false;
  const shutdown = (signal: string) => {
    signalled ??= signal;
    if (!close || closing) return;
    closing = true;
    log(`${signalled}: shutting down`);
    setTimeout(() => process.exit(1), 10_000).unref();
    close().then(
      () => process.exit(0),
      (error) => {
        log(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  return {
    started(c) {
      close = c;
      if (signalled) shutdown(signalled);
    },
  };
}
