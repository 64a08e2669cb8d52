import { parseArgs } from "node:util";
import { exitOnSignals, parseConfig, runServer } from "@aexhq/brain-server";
import { parseWorkerConfig, startWorker } from "@aexhq/brain-worker";

const log = (m: string) => process.stderr.write(`brain: ${m}\n`);

/**
 * `brain start`: what `npm start` does, a server and (unless BRAIN_WORKER=0) a worker in this
 * process, sharing the database and the server's LISTEN. Resolves once serving; signals end the process.
 */
export async function start(args: string[]): Promise<number | "running"> {
  parseArgs({ args, options: {}, strict: true });
  const signals = exitOnSignals(log);
  const server = await runServer(parseConfig(process.env));
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  if ((process.env.BRAIN_WORKER ?? "1") !== "0") {
    // The worker hears of commits through the server's LISTEN: Postgres wakes every listening
    // backend at every notifying commit, and a second one here would hear nothing new.
    worker = await startWorker({
      ...parseWorkerConfig({ ...process.env, DATABASE_URL: server.databaseUrl }),
      commits: server.commits,
    });
    process.stdout.write("Worker: in-process (BRAIN_WORKER=0 to run none)\n");
    if (worker.healthUrl)
      process.stdout.write(`Worker health: ${worker.healthUrl}/healthz, ${worker.healthUrl}/readyz\n`);
  }
  signals.started(async () => {
    await worker?.stop();
    await server.close();
  });
  return "running";
}

/** `brain worker`: a worker alone, as `npm run worker` runs it. */
export async function worker(args: string[]): Promise<number | "running"> {
  parseArgs({ args, options: {}, strict: true });
  const config = parseWorkerConfig(process.env);
  const signals = exitOnSignals(log);
  const running = await startWorker(config);
  process.stdout.write(`Brain worker ready (id ${running.id}, concurrency ${config.concurrency})\n`);
  signals.started(() => running.stop());
  return "running";
}
