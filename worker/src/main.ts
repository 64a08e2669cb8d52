#!/usr/bin/env node
// Entry point of `npm run worker`: the only place that reads the environment.
import { parseWorkerConfig } from "./config.js";
import { startWorker } from "./worker.js";

async function main(): Promise<void> {
  const config = parseWorkerConfig(process.env);
  const worker = await startWorker(config);
  process.stdout.write(`Brain worker ready (id ${worker.id}, concurrency ${config.concurrency})\n`);
  if (worker.healthUrl)
    process.stdout.write(`Worker health: ${worker.healthUrl}/healthz, ${worker.healthUrl}/readyz\n`);

  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), 10_000).unref();
    worker.stop().then(
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
}

main().catch((error) => {
  process.stderr.write(`brain-worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
