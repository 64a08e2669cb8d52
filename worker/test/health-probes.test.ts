// BRAIN_WORKER_HEALTH_PORT: a worker process's /healthz and /readyz, probed while its Postgres (a
// cluster of this test's own) is stopped and started again. Liveness holds throughout; readiness
// drops while the database is away (and the heartbeat goes stale) and comes back once it answers.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RestartablePostgres, startRestartablePostgres } from "../../testkit/restartable-postgres.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
import { type NodeProcess, spawnNode } from "../../testkit/server-process.js";
import { until } from "../../testkit/wait.js";

let pg: RestartablePostgres;
let worker: NodeProcess;
let base = "";

beforeAll(async () => {
  pg = await startRestartablePostgres();
  worker = spawnNode("worker/dist/main.js", {
    env: {
      DATABASE_URL: pg.url,
      BRAIN_WORKER_CACHE_DIR: mkdtempSync(join(tmpdir(), "brain-worker-health-")),
      BRAIN_SECRET_KEY: TEST_SECRET_KEY,
      BRAIN_LOG_LEVEL: "warn",
      BRAIN_WORKER_HEALTH_PORT: "0",
    },
  });
  const [, url] = await worker.waitForLine(/^Worker health: (http:\/\/\S+)\/healthz/m, 30_000);
  base = url ?? "";
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await pg?.destroy();
});

async function probe(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it("is live throughout, ready only while its database answers", async () => {
  expect(await probe("/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
  expect(await probe("/readyz")).toEqual({
    status: 200,
    body: expect.objectContaining({ status: "ready", database: true, heartbeat: true, boss: true }),
  });

  await pg.stop();
  try {
    const down = await until(
      "the worker's readiness to drop",
      async () => {
        const r = await probe("/readyz");
        return r.status === 503 && r.body.database === false ? r : undefined;
      },
      15_000,
    );
    expect(down.body).toMatchObject({ status: "unavailable", database: false });
    // Past the stale window the heartbeat is reported stale too.
    await until("the heartbeat to go stale", async () => (await probe("/readyz")).body.heartbeat === false, 15_000);
    expect(await probe("/healthz")).toMatchObject({ status: 200 });
  } finally {
    await pg.start();
  }

  await until("the worker's readiness to come back", async () => (await probe("/readyz")).status === 200, 30_000);
  expect((await probe("/readyz")).body).toMatchObject({ database: true, heartbeat: true, boss: true });
  expect(worker.child.exitCode, worker.output()).toBeNull();
}, 120_000);

it("answers 404 elsewhere", async () => {
  expect((await probe("/")).status).toBe(404);
});
