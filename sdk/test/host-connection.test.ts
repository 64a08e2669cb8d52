import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Brain } from "../src/brain.js";
import type { ToolContext } from "../src/context.js";
import { tool } from "../src/tool.js";
import { FakeBrain } from "./fake-brain.js";

const SCRIPT = { provider: "scripted" as const, script: [] };

let server: FakeBrain;
let brain: Brain;

beforeEach(async () => {
  server = await new FakeBrain().start();
  brain = new Brain({ url: server.url, token: server.token });
});
afterEach(async () => {
  await brain.close();
  await server.stop();
});

/** A tool whose handler exposes its context and stays open until the test finishes it. */
function openTool(name = "lookup") {
  const contexts: ToolContext[] = [];
  const declared = tool({
    name,
    description: "Stays open.",
    input: z.object({ id: z.string() }),
    run: (_input, ctx) => {
      contexts.push(ctx as ToolContext);
    },
  });
  return { declared, contexts };
}

function invoke(sessionId: string, sequence: number, toolName = "lookup", deadline: number | null = null) {
  server.send({ type: "invoke", sessionId, sequence, tool: toolName, input: { id: "1" }, deadline });
}

describe("host registration and connection", () => {
  it("registers one host lazily and shares its connection across sessions", async () => {
    expect(brain.credentials()).toBeUndefined();
    const { declared } = openTool();
    const first = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    const second = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    expect(server.requests.filter((r) => r.path === "/v1/hosts")).toHaveLength(1);
    expect(server.connections).toHaveLength(1);
    expect(server.connections[0]?.authorization).toBe(`Bearer ${server.hostToken}`);
    expect(brain.credentials()).toEqual({ hostId: server.hostId, hostToken: server.hostToken });
    const bodies = server.requests.filter((r) => r.path === "/v1/sessions").map((r) => r.body);
    expect(bodies[0]).toMatchObject({ hostId: server.hostId, tools: [{ name: "lookup", env: { type: "host" } }] });
    expect(first.id).not.toBe(second.id);
  });

  it("creates a session without tools without registering a host", async () => {
    await brain.sessions.create({ model: SCRIPT });
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/sessions"]);
    expect(server.connections).toHaveLength(0);
  });

  it("refuses duplicate tool names locally", async () => {
    const { declared } = openTool();
    await expect(brain.sessions.create({ model: SCRIPT, tools: [declared(), declared()] })).rejects.toMatchObject({
      code: "duplicate_tool",
    });
    expect(server.requests).toHaveLength(0);
  });

  it("fails creation clearly when the host connection is refused", async () => {
    const refused = new Brain({
      url: server.url,
      token: server.token,
      credentials: { hostId: server.hostId, hostToken: "wrong" },
    });
    const { declared } = openTool();
    await expect(refused.sessions.create({ model: SCRIPT, tools: [declared()] })).rejects.toMatchObject({
      code: "unauthorized",
    });
    await refused.close();
  });
});

describe("invocations", () => {
  it("routes invoke by session and tool, numbers frames with increasing ids, resolves emit with the ack sequence", async () => {
    const { declared, contexts } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    invoke(session.id, 3);
    await server.until(() => server.framesOf("return").length === 1);
    const ctx = contexts[0]!;
    expect([ctx.sessionId, ctx.sequence]).toEqual([session.id, 3]);
    const sequence = await ctx.emit("progress", { pct: 10 });
    await ctx.finish({ ok: true });
    const frames = server.frames.filter((f) => f.type !== "ping");
    expect(frames.map((f) => f.type)).toEqual(["return", "emit", "finish"]);
    const ids = frames.map((f) => f.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(3);
    expect(sequence).toBeGreaterThanOrEqual(100);
  });

  it("rejects the awaiting promise with the code of a reject frame", async () => {
    server.rejectKinds.add("too_much");
    const { declared, contexts } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    invoke(session.id, 3);
    await server.until(() => contexts.length === 1);
    await expect(contexts[0]!.emit("too_much", {})).rejects.toMatchObject({ code: "budget_exceeded" });
  });

  it("answers an unknown tool or session with an unknown_tool error outcome", async () => {
    const { declared } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    invoke(session.id, 4, "nope");
    invoke("0b7c1e9a-5d1f-4c3e-8b2a-9f0e1d2c3b4a", 5, "lookup");
    await server.until(() => server.framesOf("finish").length === 2);
    for (const frame of server.framesOf("finish")) {
      expect(frame).toMatchObject({ outcome: { status: "error", error: { code: "unknown_tool" } } });
    }
  });

  it("a cancel frame aborts the handler's signal, naming the status", async () => {
    const { declared, contexts } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    invoke(session.id, 3);
    await server.until(() => contexts.length === 1);
    server.send({ type: "cancel", sessionId: session.id, sequence: 3, status: "cancelled" });
    const ctx = contexts[0]!;
    await vi.waitFor(() => expect(ctx.signal.aborted).toBe(true));
    expect(ctx.signal.reason).toMatchObject({ details: { status: "cancelled" } });
    await expect(ctx.finish()).rejects.toMatchObject({ code: "execution_finished" });
  });

  it("a release frame drops the session's handlers", async () => {
    const { declared, contexts } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    server.send({ type: "release", sessionId: session.id });
    invoke(session.id, 3);
    await server.until(() => server.framesOf("finish").length === 1);
    expect(contexts).toHaveLength(0);
    expect(server.framesOf("finish")[0]).toMatchObject({ outcome: { error: { code: "unknown_tool" } } });
  });

  it("ending a session releases its handlers", async () => {
    const { declared, contexts } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    await session.end();
    invoke(session.id, 3);
    await server.until(() => server.framesOf("finish").length === 1);
    expect(contexts).toHaveLength(0);
  });
});

describe("connection loss", () => {
  it("aborts in-flight handlers, fails unanswered frames, reconnects as the same host and re-sends nothing", async () => {
    const { declared, contexts } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    invoke(session.id, 3);
    await server.until(() => server.framesOf("return").length === 1);
    const ctx = contexts[0]!;
    const sentBefore = server.frames.length;
    server.socket.terminate();
    await vi.waitFor(() => expect(ctx.signal.aborted).toBe(true));
    expect(ctx.signal.reason).toMatchObject({ details: { status: "unknown" } });
    await expect(ctx.emit("after_loss", {})).rejects.toMatchObject({ code: "execution_finished" });
    await server.until(() => server.connections.length === 2);
    expect(server.connections[1]?.authorization).toBe(`Bearer ${server.hostToken}`);
    expect(server.requests.filter((r) => r.path === "/v1/hosts")).toHaveLength(1);
    // The same session's tools are served on the new connection; nothing old is re-sent.
    invoke(session.id, 9);
    await server.until(() => contexts.length === 2);
    await contexts[1]!.finish("fresh");
    const after = server.frames.slice(sentBefore).filter((f) => f.type !== "ping");
    expect(after.map((f) => [f.type, f.sequence])).toEqual([
      ["return", 9],
      ["finish", 9],
    ]);
  });

  it("terminates a silent connection after twice the heartbeat and reconnects", async () => {
    server.heartbeatMs = 40;
    server.answerPings = false;
    const { declared } = openTool();
    await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    await server.until(() => server.framesOf("ping").length >= 1);
    server.heartbeatMs = 5_000;
    await server.until(() => server.connections.length === 2, 2_000);
    expect(server.connections[0]?.socket.readyState).not.toBe(1);
  });

  it("stays connected while pongs arrive", async () => {
    server.heartbeatMs = 30;
    const { declared } = openTool();
    await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    await server.until(() => server.framesOf("ping").length >= 6);
    expect(server.connections).toHaveLength(1);
  });
});

describe("close", () => {
  it("aborts in-flight handlers, closes the socket, stops reconnecting, and is idempotent", async () => {
    const { declared, contexts } = openTool();
    const session = await brain.sessions.create({ model: SCRIPT, tools: [declared()] });
    invoke(session.id, 3);
    await server.until(() => contexts.length === 1);
    await Promise.all([brain.close(), brain.close()]);
    await brain.close();
    expect(contexts[0]!.signal.aborted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.connections).toHaveLength(1);
    expect(server.socket.readyState).toBe(3);
    await expect(brain.sessions.create({ model: SCRIPT, tools: [declared()] })).rejects.toMatchObject({
      code: "not_connected",
    });
  });
});

describe("reattachment", () => {
  it("restores a session's handlers under saved credentials without registering a new host", async () => {
    const restarted = new Brain({
      url: server.url,
      token: server.token,
      credentials: { hostId: server.hostId, hostToken: server.hostToken },
    });
    const { declared, contexts } = openTool();
    const session = await restarted.sessions.get("6f1d8c2e-2b7a-4f4e-9a55-0d8c3b9f6a11", { tools: [declared()] });
    expect(server.requests.some((r) => r.path === "/v1/hosts")).toBe(false);
    invoke(session.id, 12);
    await server.until(() => contexts.length === 1);
    await restarted.close();
  });

  it("refuses tools that are not exactly the session's, and tools without the session's host credentials", async () => {
    const other = tool({ name: "other", description: "", input: z.object({}), run: () => {} });
    await expect(
      brain.sessions.get("6f1d8c2e-2b7a-4f4e-9a55-0d8c3b9f6a11", { tools: [other()] }),
    ).rejects.toMatchObject({ code: "invalid_tool" });
    const { declared } = openTool();
    await expect(
      brain.sessions.get("6f1d8c2e-2b7a-4f4e-9a55-0d8c3b9f6a11", { tools: [declared()] }),
    ).rejects.toMatchObject({ code: "host_required" });
  });
});
