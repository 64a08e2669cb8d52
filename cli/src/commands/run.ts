import { parseArgs } from "node:util";
import { exitOnSignals, parseConfig, runServer } from "@aexhq/brain-server";
import { parseWorkerConfig, startWorker } from "@aexhq/brain-worker";
import { EXIT_FAILURE } from "../errors.js";

const log = (m: string) => process.stderr.write(`brain: ${m}\n`);

/** What a long-running command started, stopped in reverse order. */
type Stops = (() => Promise<void>)[];

/**
 * Runs a long-running command's start under exitOnSignals. A start that fails gives back what it
 * started and ends the process with 1: the signal handler waits for `started`, which would never
 * come, so the process would otherwise neither exit nor answer SIGTERM.
 */
async function serve(begin: (stops: Stops) => Promise<void>): Promise<"running"> {
  const signals = exitOnSignals(log);
  const stops: Stops = [];
  const stopAll = async () => {
    for (const stop of [...stops].reverse()) await stop();
  };
  try {
    await begin(stops);
  } catch (error) {
    await stopAll().catch(() => {});
    log(error instanceof Error ? error.message : String(error));
    process.exit(EXIT_FAILURE);
  }
  signals.started(stopAll);
  return "running";
}

/**
 * `brain start`: what `npm start` does, a server and (unless BRAIN_WORKER=0) a worker in this
 * process, sharing the database and the server's LISTEN. Resolves once serving; signals end the process.
 */
export async function start(args: string[]): Promise<number | "running"> {
  parseArgs({ args, options: {}, strict: true });
  return serve(async (stops) => {
    const config = parseConfig(process.env);
    const server = await runServer(config);
    stops.push(() => server.close());
    if ((process.env.BRAIN_WORKER ?? "1") === "0") return;
    // The worker hears of commits through the server's LISTEN: Postgres wakes every listening
    // backend at every notifying commit, and a second one here would hear nothing new.
    const worker = await startWorker({
      ...parseWorkerConfig({ ...process.env, DATABASE_URL: server.databaseUrl }),
      // The same reach as the server's (loopback on the embedded default, as its banner says).
      egress: config.egress,
      commits: server.commits,
    });
    stops.push(() => worker.stop());
    process.stdout.write("Worker: in-process (BRAIN_WORKER=0 to run none)\n");
    if (worker.healthUrl)
      process.stdout.write(`Worker health: ${worker.healthUrl}/healthz, ${worker.healthUrl}/readyz\n`);
  });
}

/** `brain worker`: a worker alone, as `npm run worker` runs it. */
export async function worker(args: string[]): Promise<number | "running"> {
  parseArgs({ args, options: {}, strict: true });
  const config = parseWorkerConfig(process.env);
  return serve(async (stops) => {
    const running = await startWorker(config);
    stops.push(() => running.stop());
    process.stdout.write(`Brain worker ready (id ${running.id}, concurrency ${config.concurrency})\n`);
  });
}
