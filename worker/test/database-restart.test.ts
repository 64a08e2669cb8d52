// A worker process on a Postgres of the test's own, which the test restarts (fast, immediate) and
// cuts the connections of. The worker must stay up, heartbeat again and run later calls: its
// journal writer, LISTEN connection, pools and pg-boss all reconnect.
import { connect } from "@aexhq/brain-db/connect";
import { migrate } from "@aexhq/brain-db/migrate";
import { startBoss } from "@aexhq/brain-db/queue";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testComponent } from "../../testkit/components.js";
import type { TestDatabase } from "../../testkit/database.js";
import { type RestartablePostgres, startRestartablePostgres } from "../../testkit/restartable-postgres.js";
import type { NodeProcess } from "../../testkit/server-process.js";
import { until } from "../../testkit/wait.js";
import {
  callComponent,
  createComponentSession,
  type Harness,
  spawnWorkerProcess,
  startHarness,
  uploadComponent,
  waitForEnd,
} from "./support.js";

let pg: RestartablePostgres;
let h: Harness;
let worker: NodeProcess;
let workerId: string;
let session: string;

beforeAll(async () => {
  pg = await startRestartablePostgres();
  const sql = connect(pg.url, { schema: "brain", searchPath: true, max: 8, applicationName: "test-harness" });
  await migrate(sql, "brain");
  // pg-boss installs its schema on first start; the worker and the harness then share it.
  await (await startBoss(sql, "brain", () => {})).stop({ graceful: false });
  const db: TestDatabase = {
    url: pg.url,
    directUrl: pg.url,
    serverDirectUrl: undefined,
    name: "postgres",
    schema: "brain",
    sql,
    drop: async () => {
      await sql.end({ timeout: 1 });
    },
  };
  h = await startHarness(db);
  const sha256 = await uploadComponent(h.db.sql, await testComponent("script"));
  session = await createComponentSession(h, [{ sha256 }]);
  const spawned = await spawnWorkerProcess(pg.url, {}, 60_000);
  worker = spawned.proc;
  workerId = spawned.id;
}, 180_000);

afterAll(async () => {
  await worker?.kill().catch(() => {});
  await h?.close().catch(() => {});
  await pg?.destroy();
});

async function callWorks(value: number): Promise<void> {
  const seq = await until(
    "the harness to write again",
    () =>
      callComponent(h, session, { input: { steps: [{ op: "finish", outcome: { status: "ok", value } }] } }).catch(
        () => undefined,
      ),
    60_000,
  );
  expect((await waitForEnd(h.db.sql, session, seq, 60_000)).outcome).toEqual({ status: "ok", value });
}

async function beating(): Promise<void> {
  await until(
    "the worker's heartbeat to resume",
    async () => {
      const rows = await h.db.sql<{ fresh: boolean }[]>`
        SELECT heartbeat_at > now() - interval '2 seconds' AND stopped_at IS NULL AS fresh
        FROM servers WHERE id = ${workerId}`.catch(() => []);
      return rows[0]?.fresh === true;
    },
    60_000,
  );
}

function alive(): void {
  expect(worker.child.exitCode, worker.output()).toBeNull();
  expect(worker.output()).not.toMatch(/TypeError|uncaught/i);
}

it("runs calls before and after fast and immediate restarts and terminated backends", async () => {
  await callWorks(1);
  await pg.restart("fast");
  await beating();
  await callWorks(2);
  await pg.restart("immediate", 2000);
  await beating();
  await callWorks(3);
  expect(await pg.terminate("brain")).toBeGreaterThan(0);
  await beating();
  await callWorks(4);
  alive();
}, 240_000);
