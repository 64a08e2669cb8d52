#!/usr/bin/env node
// Entry point of `npm run worker`: the only place that reads the environment.
import { surviveLostConnections } from "@aexhq/brain-db/connect";
import { parseWorkerConfig } from "./config.js";
import { startWorker } from "./worker.js";

// Handlers first: whoever reads the banner may signal at once, and a signal arriving before a
// handler exists would kill the process by default, skipping its clean stop. One that comes
// during startup is acted on once the worker has started.
let stop: (() => Promise<void>) | undefined;
let signalled = false;
let closing = false;
const shutdown = () => {
  signalled = true;
  if (!stop || closing) return;
  closing = true;
  setTimeout(() => process.exit(1), 10_000).unref();
  stop().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(
        `brain-worker: shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exit(1);
    },
  );
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
surviveLostConnections((message) => process.stderr.write(`brain-worker: ${message}\n`));

async function main(): Promise<void> {
  const config = parseWorkerConfig(process.env);
  const worker = await startWorker(config);
  stop = () => worker.stop();
  process.stdout.write(`Brain worker ready (id ${worker.id}, concurrency ${config.concurrency})\n`);
  if (worker.healthUrl)
    process.stdout.write(`Worker health: ${worker.healthUrl}/healthz, ${worker.healthUrl}/readyz\n`);
  if (signalled) shutdown();
}

main().catch((error) => {
  process.stderr.write(`brain-worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
