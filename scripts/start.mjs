// `npm start`: a Brain server and, unless BRAIN_WORKER=0, a component worker in the same process.
// They share nothing but the database: the worker is started exactly as `npm run worker` would
// start it, with the server's database URL (the embedded one when DATABASE_URL is unset).
import { exitOnSignals, parseConfig, runServer } from "@aexhq/brain-server";

const log = (m) => process.stderr.write(`brain: ${m}\n`);
const signals = exitOnSignals(log);
try {
  const config = parseConfig(process.env);
  const server = await runServer(config);
  let worker;
  if ((process.env.BRAIN_WORKER ?? "1") !== "0") {
    const { startWorker, parseWorkerConfig } = await import("@aexhq/brain-worker");
    worker = await startWorker(parseWorkerConfig({ ...process.env, DATABASE_URL: server.databaseUrl }));
    process.stdout.write("Worker: in-process (BRAIN_WORKER=0 to run none)\n");
    if (worker.healthUrl)
      process.stdout.write(`Worker health: ${worker.healthUrl}/healthz, ${worker.healthUrl}/readyz\n`);
  }
  signals.started(async () => {
    await worker?.stop();
    await server.close();
  });
} catch (error) {
  log(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
