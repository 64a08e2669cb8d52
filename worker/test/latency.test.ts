// Cold and warm latency of a component tool call, end to end through pg-boss: from the commit of
// tool_call_started with its job to the commit of the call's end, by the database's own clocks.
// A real worker process; the numbers are printed (run: npx vitest run worker/test/latency.test.ts).
import { expect, it } from "vitest";
import { type NodeProcess, spawnNode } from "../../testkit/server-process.js";
import { callComponent, freshCacheDir, harnessForTests, scriptSession, waitForEnd } from "./support.js";

const h = harnessForTests();
const session = scriptSession(h);
const cacheDir = freshCacheDir();

async function spawnWorker(): Promise<NodeProcess> {
  const proc = spawnNode("worker/dist/main.js", {
    env: { DATABASE_URL: h.db.url, BRAIN_WORKER_CACHE_DIR: cacheDir, BRAIN_LOG_LEVEL: "warn" },
  });
  await proc.waitForLine(/^Brain worker ready/m, 30_000);
  return proc;
}

/** One call that emits once and finishes; its latency in ms, from the database's timestamps. */
async function timedCall(): Promise<number> {
  const seq = await callComponent(h, session, {
    input: {
      steps: [
        { op: "emit", kind: "progress", data: { step: 1 } },
        { op: "finish", outcome: { status: "ok", value: 1 } },
      ],
    },
  });
  await waitForEnd(h.db.sql, session, seq, 60_000);
  const [row] = await h.db.sql<{ ms: number }[]>`
    SELECT extract(epoch FROM c.ended_at - r.created_at) * 1000 AS ms
    FROM calls c JOIN records r ON r.session_id = c.session_id AND r.seq = c.seq
    WHERE c.session_id = ${session} AND c.seq = ${seq}`;
  return Number(row!.ms);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

it("measures cold start and warm calls", async () => {
  let worker = await spawnWorker();
  // Cold: a component hash this worker (and its cache directory) has never seen.
  const cold = await timedCall();
  await worker.stop();
  // A restarted worker finds the transpiled component on disk: it compiles and instantiates only.
  worker = await spawnWorker();
  const restarted = await timedCall();
  // Warm: the component is compiled in memory and a spare thread is ready.
  const warm: number[] = [];
  for (let i = 0; i < 20; i++) {
    await pause(150);
    warm.push(await timedCall());
  }
  // Back to back: the spare for the next call is still starting when it arrives.
  const burst: number[] = [];
  for (let i = 0; i < 10; i++) burst.push(await timedCall());
  await worker.stop();

  const fmt = (x: number) => `${x.toFixed(1)} ms`;
  console.log(
    [
      "component tool call latency, tool_call_started commit -> tool_call_ended commit (emit + finish):",
      `  cold (new hash: jco transpile + compile + thread + instantiate): ${fmt(cold)}`,
      `  first call after a restart (transpiled on disk):                 ${fmt(restarted)}`,
      `  warm, spaced 150 ms (n=${warm.length}): p50 ${fmt(percentile(warm, 0.5))}, p95 ${fmt(percentile(warm, 0.95))}, max ${fmt(Math.max(...warm))}`,
      `  warm, back to back (n=${burst.length}): p50 ${fmt(percentile(burst, 0.5))}, max ${fmt(Math.max(...burst))}`,
    ].join("\n"),
  );
  expect(cold).toBeLessThan(30_000);
  expect(percentile(warm, 0.5)).toBeLessThan(cold);
}, 180_000);
