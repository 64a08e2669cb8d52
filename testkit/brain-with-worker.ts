// A Brain server together with a worker, for tests of tools that run in the worker (HTTP
// Environments, tools served over HTTP): both in this process, or both as their own processes.
// The worker gets the servers' BRAIN_SECRET_KEY: it opens an Environment's sealed headers and
// signs the callback tokens the server verifies.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Brain } from "@aexhq/brain";
import { type RunningWorker, startWorker } from "@aexhq/brain-worker";
import { type InProcessBrain, type SpawnedBrain, spawnBrain, startBrain } from "./brain.js";
import { directEnvFor } from "./database.js";
import { loopbackEgressConfig } from "./egress.js";
import { TEST_SECRET_KEY } from "./secrets.js";
import { type NodeProcess, REPO_ROOT, spawnNode } from "./server-process.js";

export interface BrainWithWorker {
  brain: InProcessBrain;
  worker: RunningWorker;
  /** An SDK client of the server. */
  client: Brain;
  close(): Promise<void>;
}

/**
 * An in-process server (its own database) and an in-process worker on that database, hearing of
 * commits through the server's LISTEN, as `brain start` runs them. The worker reaches what the
 * server does (`env.BRAIN_EGRESS_ALLOW`, loopback by default) unless `workerEgressAllow` differs.
 */
export async function startBrainWithWorker(
  env: Record<string, string> = {},
  options: { workerEgressAllow?: string } = {},
): Promise<BrainWithWorker> {
  const brain = await startBrain({ env });
  const worker = await startWorker({
    commits: brain.app.brain.commits,
    databaseUrl: brain.db.url,
    ...(brain.db.serverDirectUrl ? { directUrl: brain.db.serverDirectUrl } : {}),
    schema: "brain",
    maxEmittedBytes: Number(env.BRAIN_MAX_EMITTED_BYTES ?? 1024 * 1024),
    concurrency: 4,
    cacheDir: mkdtempSync(join(tmpdir(), "brain-with-worker-")),
    logLevel: "silent",
    maxModelCalls: 100,
    secretKeys: [Buffer.from(TEST_SECRET_KEY, "hex")],
    ...loopbackEgressConfig(options.workerEgressAllow ?? env.BRAIN_EGRESS_ALLOW),
  });
  const client = new Brain({ url: brain.url, token: brain.token });
  return {
    brain,
    worker,
    client,
    async close() {
      await client.close();
      await worker.stop();
      await brain.close();
    },
  };
}

export interface SpawnedBrainWithWorker extends SpawnedBrain {
  /** `node worker/dist/main.js` (`npm run worker`), ready once this resolves. */
  worker: NodeProcess;
}

/**
 * A server process (spawnBrain: a fresh database, BRAIN_LOG_LEVEL=warn unless `env` says otherwise)
 * and a worker process on the same database; `env` goes to both.
 */
export async function spawnBrainWithWorker(
  options: { env?: Record<string, string> } = {},
): Promise<SpawnedBrainWithWorker> {
  const brain = await spawnBrain(options);
  const worker = spawnNode("worker/dist/main.js", {
    env: {
      DATABASE_URL: brain.db.url,
      ...(await directEnvFor(brain.db.url)),
      BRAIN_SECRET_KEY: TEST_SECRET_KEY,
      BRAIN_WORKER_CACHE_DIR: join(REPO_ROOT, ".brain-test", "component-cache"),
      ...options.env,
    },
  });
  try {
    await worker.waitForLine(/^Brain worker ready/m, 30_000);
  } catch (error) {
    await worker.stop();
    await brain.close();
    throw error;
  }
  return {
    ...brain,
    worker,
    async close() {
      await worker.stop();
      await brain.close();
    },
  };
}
