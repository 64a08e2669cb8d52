// `npm run worker` as a real process, given an unhandled rejection at a moment the test picks (a
// preloaded module rejects on SIGUSR2): one that says a database connection was lost is logged and
// the worker goes on consuming; any other still ends the process. The same guard as the server's
// (server/test/unit/lost-connections.test.ts), which a connection dying under an unawaited query
// needs (CI saw a server die so of `read ECONNRESET` while Postgres shut down).
import { expect, it } from "vitest";
import { until } from "../../testkit/wait.js";
import { harnessForTests, spawnWorkerProcess } from "./support.js";

const h = harnessForTests();

function rejectOnSignal(rejection: string): string {
  const preload = `process.on("SIGUSR2", () => { Promise.reject(${rejection}); });`;
  return `--import=data:text/javascript,${encodeURIComponent(preload)}`;
}

function spawnWorker(rejection: string) {
  return spawnWorkerProcess(h.db.url, { NODE_OPTIONS: rejectOnSignal(rejection) });
}

async function beatAfter(id: string, since: Date): Promise<boolean> {
  const [row] = await h.db.sql<{ beat: boolean }[]>`
    SELECT heartbeat_at > ${since} AND stopped_at IS NULL AS beat FROM servers WHERE id = ${id}`;
  return row?.beat === true;
}

it("logs a connection lost under a query nobody awaited, and goes on beating", async () => {
  const { proc, id } = await spawnWorker(`Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })`);
  try {
    proc.child.kill("SIGUSR2");
    await proc.waitForLine(/a database connection was lost under a query nobody awaited \(ECONNRESET\)/, 15_000);
    // Still the live worker it was: it beats after the rejection, and a SIGTERM stops it cleanly.
    const [row] = await h.db.sql<{ now: Date }[]>`SELECT now()`;
    await until("the worker to beat after the rejection", () => beatAfter(id, row!.now), 15_000);
  } finally {
    await proc.stop();
  }
  expect(await proc.exited).toEqual({ code: 0, signal: null });
});

it("still ends on any other unhandled rejection", async () => {
  const { proc } = await spawnWorker(`new TypeError("a bug in the worker")`);
  proc.child.kill("SIGUSR2");
  const exited = await proc.exited;
  expect(exited.code).toBe(1);
  expect(proc.output()).toContain("a bug in the worker");
});
