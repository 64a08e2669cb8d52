// A worker process's /metrics, on its health port: component calls run through pg-boss are
// counted by outcome and environment type, with their latency; BRAIN_METRICS=off serves none.
import { expect, it } from "vitest";
import { parseExposition, sampleValue } from "../../testkit/metrics.js";
import { type NodeProcess, spawnNode } from "../../testkit/server-process.js";
import { until } from "../../testkit/wait.js";
import { callComponent, freshCacheDir, harnessForTests, scriptSession, waitForEnd } from "./support.js";

const h = harnessForTests();
const session = scriptSession(h);
const cacheDir = freshCacheDir();

async function spawnWorker(env: Record<string, string> = {}): Promise<{ proc: NodeProcess; base: string }> {
  const proc = spawnNode("worker/dist/main.js", {
    env: {
      DATABASE_URL: h.db.url,
      BRAIN_WORKER_CACHE_DIR: cacheDir,
      BRAIN_LOG_LEVEL: "warn",
      BRAIN_WORKER_HEALTH_PORT: "0",
      ...env,
    },
  });
  const [, base] = await proc.waitForLine(/^Worker health: (http:\/\/\S+)\/healthz/m, 30_000);
  return { proc, base: base! };
}

it("counts the jobs it ran, by outcome and environment, with their latency", async () => {
  const { proc, base } = await spawnWorker();
  try {
    const seqs: number[] = [];
    for (const value of [1, 2]) {
      const seq = await callComponent(h, session, {
        input: {
          steps: [
            { op: "emit", kind: "progress", data: { value } },
            { op: "finish", outcome: { status: "ok", value } },
          ],
        },
      });
      await waitForEnd(h.db.sql, session, seq, 120_000);
      seqs.push(seq);
    }
    const scrape = async () => {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      return parseExposition(await res.text());
    };
    // The job's handler returns just after the call's end commits: wait for the count.
    const s = await until("both jobs to be counted", async () => {
      const got = await scrape();
      return sampleValue(got, "brain_worker_jobs_total", { outcome: "ran", env: "brain" }) === 2 ? got : undefined;
    });
    expect(sampleValue(s, "brain_worker_job_duration_seconds_count", { outcome: "ran", env: "brain" })).toBe(2);
    const seconds = sampleValue(s, "brain_worker_job_duration_seconds_sum", { outcome: "ran", env: "brain" });
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(240);
    expect(sampleValue(s, "brain_worker_jobs_total", { outcome: "failed" })).toBe(0);
    expect(sampleValue(s, "brain_worker_running_calls")).toBe(0);
    expect(sampleValue(s, "brain_emitted_bytes_total", { report: "emit" })).toBeGreaterThan(0);
    expect(sampleValue(s, "brain_emitted_bytes_total", { report: "finish" })).toBeGreaterThan(0);
    // Its journal writer committed the claims and the ends.
    expect(sampleValue(s, "brain_journal_writes_total")).toBeGreaterThanOrEqual(4);
  } finally {
    await proc.stop();
  }
}, 300_000);

it("serves no /metrics with BRAIN_METRICS=off, and its probes all the same", async () => {
  const { proc, base } = await spawnWorker({ BRAIN_METRICS: "off" });
  try {
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  } finally {
    await proc.stop();
  }
}, 120_000);
