// GET /metrics: a real server is driven through a session whose host tools end ok and in error,
// then scraped; the Prometheus exposition is parsed and its counts compared with what ran.
// BRAIN_METRICS decides who may scrape (the operator token by default, anyone, or nobody).
import { Brain, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll, startedBeforeEach } from "../../../testkit/fixtures.js";
import { parseExposition, type Sample, sampleValue } from "../../../testkit/metrics.js";
import { until } from "../../../testkit/wait.js";

const server = startedBeforeAll(() => startBrain());
const brain = startedBeforeEach(() => new Brain({ url: server.url, token: server.token }));

async function scrape(target: InProcessBrain, token: string | null = target.token): Promise<Response> {
  return fetch(`${target.url}/metrics`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
}

async function samples(): Promise<Sample[]> {
  const res = await scrape(server);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

const lookup = tool({
  name: "lookup",
  description: "Emits progress, then finishes ok.",
  input: z.object({ id: z.string() }),
  run: async ({ id }, ctx) => {
    await ctx.emit("lookup_started", { id });
    return ctx.finish({ found: id });
  },
});

const broken = tool({
  name: "broken",
  description: "Throws.",
  input: z.object({}),
  run: async () => {
    throw new Error("broken on purpose");
  },
});

describe("GET /metrics after a session with host tools", () => {
  it("counts each tool call by tool and outcome status, with latency, wake windows, model calls and commits", async () => {
    const before = await samples();
    const session = await brain.sessions.create({
      model: {
        provider: "scripted",
        script: [
          {
            toolCalls: [
              { name: "lookup", input: { id: "1" } },
              { name: "lookup", input: { id: "2" } },
              { name: "broken", input: {} },
            ],
          },
          { text: "done" },
        ],
      },
      tools: [lookup(), broken()],
    });
    expect(await session.send("go")).toBe("done");

    // The turn ended once every call had: the counts are in place, and stay there.
    const after = await until("the three calls to be counted", async () => {
      const s = await samples();
      return sampleValue(s, "brain_tool_calls_total", { tool: "broken" }) === 1 ? s : undefined;
    });
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);

    expect(delta("brain_tool_calls_total", { tool: "lookup", status: "ok" })).toBe(2);
    expect(delta("brain_tool_calls_total", { tool: "broken", status: "error" })).toBe(1);
    expect(delta("brain_tool_calls_total", { tool: "lookup", status: "error" })).toBe(0);
    expect(delta("brain_tool_calls_started_total", { tool: "lookup" })).toBe(2);
    expect(delta("brain_tool_calls_started_total", { tool: "broken" })).toBe(1);
    expect(delta("brain_tool_call_duration_seconds_count", { tool: "lookup" })).toBe(2);
    expect(delta("brain_tool_call_duration_seconds_count", { tool: "broken" })).toBe(1);
    const lookupSeconds = delta("brain_tool_call_duration_seconds_sum", { tool: "lookup" });
    expect(lookupSeconds).toBeGreaterThan(0);
    expect(lookupSeconds).toBeLessThan(60);
    // The three observations reached the model through at least one wake window.
    expect(delta("brain_wake_window_seconds_count")).toBeGreaterThanOrEqual(1);
    // Two Agentloop model calls (the tool calls, then "done"); the scripted model reports no tokens.
    expect(delta("brain_model_calls_total", { origin: "agentloop", status: "ok" })).toBe(2);
    expect(delta("brain_model_calls_total", { origin: "tool", status: "ok" })).toBe(0);
    // Two emissions and three results (two finishes, one error) were journaled through this server.
    expect(delta("brain_emitted_bytes_total", { report: "emit" })).toBeGreaterThan(0);
    // Group commit: at least one batch per write, never more; a NOTIFY with each batch that woke anyone.
    const commits = delta("brain_journal_commits_total");
    expect(commits).toBeGreaterThan(0);
    expect(delta("brain_journal_writes_total")).toBeGreaterThanOrEqual(commits);
    expect(delta("brain_journal_writes_per_commit_count")).toBe(commits);
    expect(delta("brain_notifies_sent_total")).toBeGreaterThan(0);

    // Gauges, read at the scrape: this session's Agentloop runs here, idle, on one host socket.
    expect(sampleValue(after, "brain_actors")).toBeGreaterThanOrEqual(1);
    expect(sampleValue(after, "brain_tool_calls_open")).toBe(0);
    expect(sampleValue(after, "brain_tool_calls_pending")).toBe(0);
    expect(sampleValue(after, "brain_host_connections", { kind: "host" })).toBe(1);
    expect(sampleValue(after, "brain_host_connections", { kind: "replica" })).toBe(0);
    // Process metrics come with it.
    expect(sampleValue(after, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
  });

  it("counts a call still running as open and pending, and not as ended", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = tool({
      name: "slow",
      description: "Waits for the test.",
      input: z.object({}),
      run: async (_input, ctx) => {
        await gate;
        return ctx.finish("late");
      },
    });
    const session = await brain.sessions.create({
      model: { provider: "scripted", script: [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "done" }] },
      tools: [slow()],
    });
    const turn = session.send("go");
    const running = await until("the call to be open", async () => {
      const s = await samples();
      return sampleValue(s, "brain_tool_calls_pending") === 1 ? s : undefined;
    });
    expect(sampleValue(running, "brain_tool_calls_open")).toBe(1);
    expect(sampleValue(running, "brain_turns_running")).toBe(1);
    expect(sampleValue(running, "brain_tool_calls_started_total", { tool: "slow" })).toBe(1);
    expect(sampleValue(running, "brain_tool_calls_total", { tool: "slow" })).toBe(0);
    release();
    expect(await turn).toBe("done");
    const ended = await until("the call to be counted", async () => {
      const s = await samples();
      return sampleValue(s, "brain_tool_calls_total", { tool: "slow", status: "ok" }) === 1 ? s : undefined;
    });
    expect(sampleValue(ended, "brain_tool_calls_open")).toBe(0);
    expect(sampleValue(ended, "brain_turns_running")).toBe(0);
  });
});

describe("who may scrape (BRAIN_METRICS)", () => {
  it("token (the default): the operator token only; no token is unauthorized, an application token forbidden", async () => {
    expect((await scrape(server, null)).status).toBe(401);
    const minted = await fetch(`${server.url}/v1/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "scraper" }),
    });
    const { token } = (await minted.json()) as { token: string };
    const refused = await scrape(server, token);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    expect((await scrape(server)).status).toBe(200);
  });

  it("open: anyone may scrape", async () => {
    const open = await startBrain({ env: { BRAIN_METRICS: "open" } });
    try {
      const res = await scrape(open, null);
      expect(res.status).toBe(200);
      expect(sampleValue(parseExposition(await res.text()), "brain_actors")).toBe(0);
    } finally {
      await open.close();
    }
  });

  it("off: there is no /metrics", async () => {
    const off = await startBrain({ env: { BRAIN_METRICS: "off" } });
    try {
      expect((await scrape(off)).status).toBe(404);
      expect((await scrape(off, null)).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it("a bad value stops the server from starting", async () => {
    await expect(startBrain({ env: { BRAIN_METRICS: "public" } })).rejects.toThrow(/BRAIN_METRICS/);
  });
});
