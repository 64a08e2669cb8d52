// MCP Environments end to end, against the official MCP SDK: a real MCP server (mcp-server.ts) whose
// tools a real Brain server places from tools/list, called by real workers, driven by scripted
// models. Records, outcomes, progress, cancellation reaching the MCP server, and a task call that
// survives the SIGKILL of the worker polling it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Brain, mcpEnv, mcpTools } from "@aexhq/brain";
import type { Sql } from "@aexhq/brain-db/connect";
import { startWorker } from "@aexhq/brain-worker";
import { describe, expect, it } from "vitest";
import { spawnBrainWithWorker, startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { loopbackEgressConfig } from "../../../testkit/egress.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { TEST_SECRET_KEY } from "../../../testkit/secrets.js";
import { REPO_ROOT, spawnNode } from "../../../testkit/server-process.js";
import { until } from "../../../testkit/wait.js";
import { startMcpServer } from "./mcp-server.js";

const SECRET = "Bearer mcp-s3cret-token-123456";

interface Rec {
  seq: number;
  kind: string;
  payload: Record<string, unknown> & { call?: number; outcome?: unknown; data?: unknown };
}

async function journalOf(sql: Sql, sessionId: string): Promise<Rec[]> {
  return sql<Rec[]>`SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} ORDER BY seq`;
}

function script(calls: { name: string; input: unknown }[]) {
  return { provider: "scripted" as const, script: [{ toolCalls: calls as never }, { text: "done" }] };
}

const idle = { provider: "scripted" as const, script: [{ text: "idle" }] };

describe("in one process", () => {
  const mcp = startedBeforeAll(startMcpServer);
  const stack = startedBeforeAll(() => startBrainWithWorker());
  const env = () => mcpEnv({ name: "tools", url: mcp.url, headers: { authorization: SECRET } });

  it("places the server's tools from tools/list, journals their schemas, and maps results, errors and progress", async () => {
    const session = await stack.client.sessions.create({
      model: script([
        { name: "progress", input: { steps: 3 } },
        { name: "failing", input: {} },
      ]),
      tools: [mcpTools(env(), { only: ["progress", "failing"] })],
    });
    expect(session.info.tools).toEqual(["progress", "failing"]);
    expect(await session.send("go")).toBe("done");

    const journal = await journalOf(stack.brain.db.sql, session.id);
    const created = journal[0]!.payload as { mcpTools: Record<string, unknown>[] };
    expect(created.mcpTools.map((t) => t.tool)).toEqual(["progress", "failing"]);
    expect(created.mcpTools[0]).toMatchObject({
      environment: "tools",
      taskSupport: "forbidden",
      inputSchema: { type: "object", properties: { steps: { type: "integer" } } },
      outputSchema: { type: "object", properties: { counted: { type: "number" } } },
    });
    const started = journal.filter((r) => r.kind === "tool_call_started");
    expect(started.map((r) => r.payload.tool)).toEqual(["progress", "failing"]);
    const [progressSeq, failingSeq] = started.map((r) => r.seq);

    const progress = journal.filter((r) => r.kind === "progress" && r.payload.call === progressSeq);
    expect(progress.map((r) => r.payload.data)).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
    const result = journal.find((r) => r.kind === "tool_result" && r.payload.call === progressSeq)!;
    expect(result.payload).toMatchObject({ outcome: { status: "ok", value: { counted: 3 } }, content: "counted to 3" });
    // Progress is journaled before the result it precedes.
    expect(Math.max(...progress.map((r) => r.seq))).toBeLessThan(result.seq);

    const failed = journal.find((r) => r.kind === "tool_call_ended" && r.payload.call === failingSeq)!;
    expect(failed.payload.outcome).toMatchObject({
      status: "error",
      error: { code: "mcp_tool_error", message: "the disk is full" },
    });
    expect(journal.filter((r) => r.kind === "tool_call_ended")).toHaveLength(2);

    // The sealed header reached the MCP server, and no table holds it.
    const calls = mcp.seen.filter((s) => s.method === "tools/call");
    expect(calls.map((c) => c.authorization)).toEqual([SECRET, SECRET]);
    const everything = await stack.brain.db.sql<{ t: string }[]>`
      SELECT string_agg(to_jsonb(r)::text, '') AS t FROM brain.records r`;
    expect(everything[0]!.t).not.toContain("s3cret");
  });

  it("refuses a tool the server does not advertise, and an unreachable server, storing nothing", async () => {
    const before = await stack.brain.db.sql`SELECT count(*)::int AS n FROM brain.sessions`;
    await expect(
      stack.client.sessions.create({ model: idle, tools: [mcpTools(env(), { only: ["nope"] })] }),
    ).rejects.toMatchObject({ code: "mcp_tool_not_found" });
    const gone = mcpEnv({ name: "gone", url: "http://127.0.0.1:9/mcp" });
    await expect(stack.client.sessions.create({ model: idle, tools: [mcpTools(gone)] })).rejects.toMatchObject({
      code: "mcp_unavailable",
    });
    // Only the server writes MCP placements (from tools/list): a caller's own is refused.
    const forged = await fetch(`${stack.brain.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.brain.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: idle,
        tools: [
          {
            name: "slow",
            description: "forged",
            inputSchema: {},
            outputSchema: null,
            env: { type: "mcp", name: "tools" },
            implementation: { type: "mcp", url: mcp.url, tool: "slow", taskSupport: "forbidden" },
          },
        ],
      }),
    });
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("invalid_placement");
    const after = await stack.brain.db.sql`SELECT count(*)::int AS n FROM brain.sessions`;
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it("a deadline and a cancellation reach the MCP server as notifications/cancelled", async () => {
    const session = await stack.client.sessions.create({
      model: script([{ name: "slow", input: { label: "deadline" } }]),
      tools: [mcpTools(env(), { only: ["slow"], timeoutMs: 1500 })],
    });
    expect(await session.send("go")).toBe("done");
    const ended = (await journalOf(stack.brain.db.sql, session.id)).find((r) => r.kind === "tool_call_ended")!;
    expect(ended.payload.outcome).toMatchObject({ status: "timeout" });
    await until("the MCP server to see the deadline's cancellation", () => mcp.cancelled.includes("deadline"));

    const second = await stack.client.sessions.create({
      model: script([{ name: "slow", input: { label: "cancel" } }]),
      tools: [mcpTools(env(), { only: ["slow"] })],
    });
    const turn = second.send("go").catch((e: unknown) => e);
    await until("the slow call to start there", () => mcp.slowStarted.includes("cancel"));
    await second.cancel();
    await turn;
    await until("the MCP server to see the cancellation", () => mcp.cancelled.includes("cancel"));
    const outcome = (await journalOf(stack.brain.db.sql, second.id)).find((r) => r.kind === "tool_call_ended")!;
    expect(outcome.payload.outcome).toMatchObject({ status: "cancelled" });
  });
});

describe("a worker stopping mid-task", () => {
  const mcp = startedBeforeAll(startMcpServer);
  const stack = startedBeforeAll(() => startBrainWithWorker());

  it("polls a task many times without piling listeners on the call's signal", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const env = mcpEnv({ name: "polled", url: mcp.url });
      const session = await stack.client.sessions.create({
        model: script([{ name: "long_task", input: { job: "polled" } }]),
        tools: [mcpTools(env, { only: ["long_task"] })],
      });
      const polls = () => mcp.seen.filter((s) => s.method === "tasks/get").length;
      const [tasksBefore, before] = [mcp.tasks.length, polls()];
      const turn = session.send("go");
      await until("the task to exist", () => mcp.tasks.length > tasksBefore);
      const task = mcp.tasks.at(-1)!;
      // Each poll used to leave one abort listener on the call's signal; Node warns past ten.
      await until("fifteen more polls", () => polls() >= before + 15, 30_000);
      await mcp.completeTask(task, { content: [], structuredContent: { answer: 1 } });
      expect(await turn).toBe("done");
      // Node emits its warnings on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });

  it("hands its task call to the next worker instead of ending it unknown; a deadline sends tasks/cancel", async () => {
    const env = mcpEnv({ name: "jobs", url: mcp.url });
    const session = await stack.client.sessions.create({
      model: script([{ name: "long_task", input: { job: "stop" } }]),
      tools: [mcpTools(env, { only: ["long_task"] })],
    });
    const turn = session.send("go");
    await until("the first worker to poll", () => mcp.seen.some((s) => s.method === "tasks/get"));
    await stack.worker.stop();
    const polled = mcp.seen.filter((s) => s.method === "tasks/get").length;
    const next = await startWorker({
      databaseUrl: stack.brain.db.url,
      schema: "brain",
      maxEmittedBytes: 1024 * 1024,
      concurrency: 2,
      cacheDir: mkdtempSync(join(tmpdir(), "mcp-worker-")),
      logLevel: "silent",
      maxModelCalls: 100,
      secretKeys: [Buffer.from(TEST_SECRET_KEY, "hex")],
      ...loopbackEgressConfig(),
    });
    try {
      await until(
        "the next worker to poll the same task",
        () => mcp.seen.filter((s) => s.method === "tasks/get").length > polled + 1,
      );
      // The latest task is this call's (an earlier test made one too).
      await mcp.completeTask(mcp.tasks.at(-1)!, { content: [], structuredContent: { answer: 7 } });
      expect(await turn).toBe("done");
      const ended = (await journalOf(stack.brain.db.sql, session.id)).filter((r) => r.kind === "tool_call_ended");
      expect(ended.map((r) => r.payload.outcome)).toEqual([{ status: "ok", value: { answer: 7 } }]);

      // A task call reaching its deadline: the task is cancelled on the MCP server.
      const timed = await stack.client.sessions.create({
        model: script([{ name: "long_task", input: { job: "late" } }]),
        tools: [mcpTools(env, { only: ["long_task"], timeoutMs: 1500 })],
      });
      expect(await timed.send("go")).toBe("done");
      const outcome = (await journalOf(stack.brain.db.sql, timed.id)).find((r) => r.kind === "tool_call_ended")!;
      expect(outcome.payload.outcome).toMatchObject({ status: "timeout" });
      await until("tasks/cancel to reach the MCP server", () => mcp.seen.some((s) => s.method === "tasks/cancel"));
    } finally {
      await next.stop();
    }
  });
});

describe("across the death of a worker", () => {
  const mcp = startedBeforeAll(startMcpServer);
  const stack = startedBeforeAll(() => spawnBrainWithWorker(), { timeoutMs: 60_000 });

  it("a task call whose worker is SIGKILLed is resumed by another worker, which polls the same task to its end", async () => {
    const client = new Brain({ url: stack.url, token: stack.token });
    const env = mcpEnv({ name: "jobs", url: mcp.url, headers: { authorization: SECRET } });
    let second: ReturnType<typeof spawnNode> | undefined;
    try {
      const session = await client.sessions.create({
        model: script([{ name: "long_task", input: { job: "index" } }]),
        tools: [mcpTools(env, { only: ["long_task"] })],
      });
      const turn = session.send("go");
      const sql = stack.db.sql;
      // The task id is journaled before the first poll; wait until the worker polls it.
      await until("the task to be created and journaled", async () =>
        (await journalOf(sql, session.id)).some((r) => r.kind === "brain.mcp_task"),
      );
      const taskId = mcp.tasks[0]!;
      const record = (await journalOf(sql, session.id)).find((r) => r.kind === "brain.mcp_task")!;
      expect(record.payload.data).toMatchObject({ mcpTask: { taskId } });
      await until("the first worker to poll", () => mcp.seen.some((s) => s.method === "tasks/get"));

      const holder = () => sql<{ server: string }[]>`
        SELECT hc.server_id AS server FROM brain.calls c JOIN brain.host_connections hc ON hc.id = c.connection_id
        WHERE c.session_id = ${session.id}`;
      const [first] = await holder();
      await stack.worker.kill("SIGKILL");
      const polledBefore = mcp.seen.filter((s) => s.method === "tasks/get").length;
      second = spawnNode("worker/dist/main.js", {
        env: {
          DATABASE_URL: stack.db.url,
          BRAIN_SECRET_KEY: TEST_SECRET_KEY,
          BRAIN_WORKER_CACHE_DIR: join(REPO_ROOT, ".brain-test", "component-cache"),
        },
      });
      await second.waitForLine(/^Brain worker ready/m, 30_000);
      // The server declares the first worker dead (3 s of silence) and hands the call on.
      await until(
        "the second worker to poll the same task",
        () => mcp.seen.filter((s) => s.method === "tasks/get").length > polledBefore + 1,
        60_000,
      );
      await mcp.completeTask(taskId, {
        content: [{ type: "text", text: "indexed" }],
        structuredContent: { answer: 42 },
      });
      expect(await turn).toBe("done");

      const journal = await journalOf(sql, session.id);
      const ended = journal.filter((r) => r.kind === "tool_call_ended");
      expect(ended).toHaveLength(1);
      expect(ended[0]!.payload.outcome).toEqual({ status: "ok", value: { answer: 42 } });
      const result = journal.find((r) => r.kind === "tool_result")!;
      expect(result.payload.content).toBe("indexed");
      // Sent once: one task-augmented tools/call, and every poll in the task's own MCP session.
      const calls = mcp.seen.filter((s) => s.method === "tools/call");
      expect(calls).toEqual([expect.objectContaining({ tool: "long_task", task: true, authorization: SECRET })]);
      const sessions = new Set(mcp.seen.filter((s) => s.method.startsWith("tasks/")).map((s) => s.session));
      expect(sessions.size).toBe(1);
      // Ended by a worker other than the one that created the task.
      const [last] = await holder();
      expect(last!.server).not.toBe(first!.server);
    } finally {
      await client.close();
      await second?.stop();
    }
  });
});
