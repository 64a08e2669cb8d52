// The SDK's host connection against a real Brain server (startBrain: its own database, a real
// listening socket, real WebSockets): registration, welcome, routing, rejects, release, loss and
// reconnection, heartbeats, close and reattachment.
import { randomUUID } from "node:crypto";
import type { ModelConfig } from "@aexhq/brain-contracts";
// The app.websocketServer decoration of the real server.
import type {} from "@fastify/websocket";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { z } from "zod";
import { type InProcessBrain, startBrain } from "../../testkit/brain.js";
import { startedBeforeAll, startedBeforeEach } from "../../testkit/fixtures.js";
import { deferred, serverTicks, until, within } from "../../testkit/wait.js";
import { Brain } from "../src/brain.js";
import type { ToolContext } from "../src/context.js";
import { tool } from "../src/tool.js";

const server = startedBeforeAll(() => startBrain());
const brain = startedBeforeEach(() => new Brain({ url: server.url, token: server.token }));

/** Step i of the script calls `lookup` with id i+1 when `calls[i]` is true, else answers "turn i". */
function script(...calls: boolean[]): ModelConfig {
  return {
    provider: "scripted",
    script: calls.flatMap((call, i) =>
      call ? [{ toolCalls: [{ name: "lookup", input: { id: String(i + 1) } }] }, { text: `turn ${i}` }] : [],
    ),
  };
}
const NO_TOOLS: ModelConfig = { provider: "scripted", script: [{ text: "hello" }] };

/** A `lookup` tool that records each context and stays open unless `finish` is set. */
function openTool(options: { finish?: boolean; timeoutMs?: number } = {}) {
  const contexts: ToolContext[] = [];
  const inputs: unknown[] = [];
  let notify = (): void => {};
  const declared = tool({
    name: "lookup",
    description: "Records its calls.",
    input: z.object({ id: z.string() }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    run: (input, ctx) => {
      contexts.push(ctx);
      inputs.push(input);
      notify();
      if (options.finish) return ctx.finish({ id: input.id });
    },
  });
  /** Resolves once `n` invocations have arrived. */
  const entered = (n: number) =>
    within(
      new Promise<void>((resolve) => {
        notify = () => {
          if (contexts.length >= n) resolve();
        };
        notify();
      }),
      `${n} invocation(s)`,
    );
  return { declared, contexts, inputs, entered };
}

function aborted(signal: AbortSignal): Promise<unknown> {
  return within(
    new Promise((resolve) => {
      if (signal.aborted) resolve(signal.reason);
      else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
    }),
    "the handler's signal to abort",
  );
}

async function count(table: "hosts" | "sessions" | "host_connections", hostId?: string): Promise<number> {
  const column = table === "hosts" ? "id" : "host_id";
  const [row] = await server.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM ${server.db.sql(table)}
    WHERE ${hostId ?? null}::uuid IS NULL OR ${server.db.sql(column)} = ${hostId ?? null}::uuid`;
  return row?.n ?? 0;
}

async function journal(sessionId: string): Promise<{ seq: number; kind: string; payload: Record<string, unknown> }[]> {
  return server.db.sql`SELECT seq, kind, payload FROM journal WHERE session_id = ${sessionId} ORDER BY seq`;
}

/** The server's side of a host's connections. */
function connectionsOf(hostId: string) {
  return server.app.brain.hosts.ofHost(hostId).filter((c) => c.isOpen);
}

describe("host registration and connection", () => {
  it("registers one host lazily and shares its welcomed connection across sessions", async () => {
    expect(brain.credentials()).toBeUndefined();
    const { declared } = openTool();
    const first = await brain.sessions.create({ model: script(true), tools: [declared()] });
    const credentials = brain.credentials();
    expect(credentials).toEqual({ hostId: expect.any(String), hostToken: expect.any(String) });
    const hostId = credentials?.hostId as string;
    // Welcomed before create resolved: the server holds exactly one open connection for the host.
    expect(connectionsOf(hostId)).toHaveLength(1);
    const second = await brain.sessions.create({ model: script(true), tools: [declared()] });
    expect([first.info.hostId, second.info.hostId]).toEqual([hostId, hostId]);
    expect(first.id).not.toBe(second.id);
    expect(await count("hosts", hostId)).toBe(1);
    expect(await count("host_connections", hostId)).toBe(1);
    const [row] = await server.db.sql<{ tools: { name: string; env: unknown }[] }[]>`
      SELECT tools FROM sessions WHERE id = ${first.id}`;
    expect(row?.tools).toEqual([
      expect.objectContaining({ name: "lookup", env: { type: "host", name: "application" } }),
    ]);
  });

  it("creates a session without tools without registering a host", async () => {
    const hosts = await count("hosts");
    const session = await brain.sessions.create({ model: NO_TOOLS });
    expect(session.info.hostId).toBeNull();
    expect(brain.credentials()).toBeUndefined();
    expect(await count("hosts")).toBe(hosts);
    await expect(session.send("hi")).resolves.toBe("hello");
  });

  it("refuses duplicate tool names locally, before registering or creating anything", async () => {
    const [hosts, sessions] = [await count("hosts"), await count("sessions")];
    const { declared } = openTool();
    await expect(brain.sessions.create({ model: NO_TOOLS, tools: [declared(), declared()] })).rejects.toMatchObject({
      code: "duplicate_tool",
    });
    expect([await count("hosts"), await count("sessions")]).toEqual([hosts, sessions]);
  });

  it("fails creation clearly when the host connection is refused", async () => {
    const { declared } = openTool();
    await brain.sessions.create({ model: NO_TOOLS, tools: [declared()] });
    const hostId = brain.credentials()?.hostId as string;
    for (const credentials of [
      { hostId, hostToken: "wrong" },
      { hostId: randomUUID(), hostToken: "whatever" },
    ]) {
      const refused = new Brain({ url: server.url, token: server.token, credentials });
      try {
        await expect(refused.sessions.create({ model: NO_TOOLS, tools: [declared()] })).rejects.toMatchObject({
          code: "unauthorized",
        });
      } finally {
        await refused.close();
      }
    }
    expect(connectionsOf(hostId)).toHaveLength(1);
  });
});

describe("invocations", () => {
  it("routes each invocation to its session's handler, with the call's journal sequence", async () => {
    const a = openTool({ finish: true });
    const b = openTool({ finish: true });
    const first = await brain.sessions.create({ model: script(true), tools: [a.declared()] });
    const second = await brain.sessions.create({ model: script(false, true), tools: [b.declared()] });
    await expect(Promise.all([first.send("go"), second.send("go")])).resolves.toEqual(["turn 0", "turn 1"]);
    expect(a.inputs).toEqual([{ id: "1" }]);
    expect(b.inputs).toEqual([{ id: "2" }]);
    expect(a.contexts[0]?.sessionId).toBe(first.id);
    const started = (await journal(first.id)).find((r) => r.kind === "tool_call_started");
    expect(a.contexts[0]?.sequence).toBe(started?.seq);
  });

  it("rejects the awaiting promise with the code of the server's reject", async () => {
    const small = await startBrain({ env: { BRAIN_MAX_EMITTED_BYTES: "200" } });
    const client = new Brain({ url: small.url, token: small.token });
    try {
      const outcome = deferred<{ big: unknown; small: number }>();
      const chatty = tool({
        name: "chatty",
        description: "Emits too much.",
        input: z.object({}),
        run: async (_input, ctx) => {
          const big = await ctx.emit("blob", { text: "x".repeat(500) }).catch((err: unknown) => err);
          const fits = await ctx.emit("note", { ok: true });
          outcome.resolve({ big, small: fits });
          return ctx.finish();
        },
      });
      const session = await client.sessions.create({
        model: { provider: "scripted", script: [{ toolCalls: [{ name: "chatty", input: {} }] }, { text: "done" }] },
        tools: [chatty()],
      });
      await session.send("go");
      const { big, small: sequence } = await outcome.promise;
      expect(big).toMatchObject({ name: "BrainError", code: "budget_exceeded" });
      const records = await small.db.sql<{ seq: number; kind: string; payload: Record<string, unknown> }[]>`
        SELECT seq, kind, payload FROM journal WHERE session_id = ${session.id} ORDER BY seq`;
      expect(records.find((r) => r.kind === "emission_rejected")?.payload).toMatchObject({
        kind: "blob",
        code: "budget_exceeded",
      });
      expect(records.some((r) => r.kind === "blob")).toBe(false);
      expect(records.find((r) => r.seq === sequence)?.kind).toBe("note");
    } finally {
      await client.close();
      await small.close();
    }
  });

  it("sends a session's calls only to a connection that attached it, never to another of the same host", async () => {
    const { declared, contexts } = openTool({ finish: true });
    const session = await brain.sessions.create({ model: script(true), tools: [declared()] });
    // Another client connects as the same host (the newest connection) but never attached this
    // session's tools: it must not be sent the call (it could only answer unknown_tool).
    const stranger = new Brain({ url: server.url, token: server.token, credentials: brain.credentials() });
    try {
      const other = tool({ name: "other", description: "", input: z.object({}), run: (_i, ctx) => ctx.finish() });
      await stranger.sessions.create({ model: NO_TOOLS, tools: [other()] });
      await expect(session.send("go")).resolves.toBe("turn 0");
      expect(contexts).toHaveLength(1);
      const records = await journal(session.id);
      expect(records.find((r) => r.kind === "tool_call_ended")?.payload.outcome).toMatchObject({ status: "ok" });
    } finally {
      await stranger.close();
    }
  });

  it("a cancelled call (cancel frame) aborts the handler's signal, naming the status", async () => {
    const { declared, contexts, entered } = openTool();
    const session = await brain.sessions.create({ model: script(true), tools: [declared()] });
    await session.send("go");
    await entered(1);
    const ctx = contexts[0] as ToolContext;
    await expect(session.cancelCall(ctx.sequence)).resolves.toBe(true);
    expect(await aborted(ctx.signal)).toMatchObject({ code: "call_ended", details: { status: "cancelled" } });
    await expect(ctx.finish()).rejects.toMatchObject({ code: "execution_finished" });
    const ended = (await journal(session.id)).find((r) => r.kind === "tool_call_ended");
    expect(ended?.payload).toEqual({ call: ctx.sequence, outcome: { status: "cancelled", cause: "sdk_cancel" } });
  });

  it("a session ended by someone else (release frame) aborts its calls and drops its handlers", async () => {
    const { declared, contexts, entered } = openTool();
    const session = await brain.sessions.create({ model: script(true), tools: [declared()] });
    await session.send("go");
    await entered(1);
    // Not through this handle: only Brain's frames can tell the SDK.
    const response = await fetch(`${server.url}/v1/sessions/${session.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(response.status).toBe(200);
    expect(await aborted(contexts[0]?.signal as AbortSignal)).toMatchObject({ details: { status: "cancelled" } });
    const ended = (await journal(session.id)).find((r) => r.kind === "tool_call_ended");
    expect(ended?.payload.outcome).toEqual({ status: "cancelled", cause: "session_ended" });
  });

  it("ending a session through its handle releases its handlers", async () => {
    const { declared, contexts, entered } = openTool();
    const session = await brain.sessions.create({ model: script(true), tools: [declared()] });
    await session.send("go");
    await entered(1);
    expect((await session.end()).status).toBe("ended");
    expect(contexts[0]?.signal.aborted).toBe(true);
    await expect(session.send("again")).rejects.toMatchObject({ code: "session_ended" });
  });
});

describe("connection loss", () => {
  it("aborts in-flight handlers, reconnects as the same host, and re-sends nothing", async () => {
    const { declared, contexts, entered } = openTool();
    const session = await brain.sessions.create({ model: script(true), tools: [declared()] });
    await session.send("go");
    await entered(1);
    const ctx = contexts[0] as ToolContext;
    const hostId = brain.credentials()?.hostId as string;
    const [lost] = connectionsOf(hostId);
    lost?.terminate();

    expect(await aborted(ctx.signal)).toMatchObject({ details: { status: "unknown" } });
    await expect(ctx.emit("after_loss", {})).rejects.toMatchObject({ code: "execution_finished" });
    await until("the call to end unknown", async () =>
      (await journal(session.id)).find((r) => r.kind === "tool_call_ended" && r.payload.call === ctx.sequence),
    ).then((r) => expect(r.payload.outcome).toEqual({ status: "unknown", cause: "connection_lost" }));

    // The same host, a new connection; no second registration.
    const fresh = await until("the host to reconnect", () => connectionsOf(hostId).find((c) => c.id !== lost?.id));
    expect(await count("hosts", hostId)).toBe(1);
    expect(await count("host_connections", hostId)).toBe(2);

    // Future commands are served on the new connection; the lost invocation is never re-sent.
    const later = await brain.sessions.create({ model: script(false, true), tools: [declared()] });
    await expect(later.send("go")).resolves.toBe("turn 1");
    await entered(2);
    expect(contexts.map((c) => [c.sessionId, c.sequence])).toEqual([
      [session.id, ctx.sequence],
      [later.id, expect.any(Number)],
    ]);
    expect(connectionsOf(hostId).map((c) => c.id)).toEqual([fresh.id]);
  });
});

describe("heartbeat", () => {
  let fast: InProcessBrain;
  let client: Brain;

  beforeEach(async () => {
    fast = await startBrain({ env: { BRAIN_HEARTBEAT_MS: "100" } });
    client = new Brain({ url: fast.url, token: fast.token });
  });
  afterEach(async () => {
    await client.close();
    await fast.close();
  });

  /** The server's end of the one host socket. */
  function serverSocket(): WebSocket {
    const sockets = [...fast.app.websocketServer.clients];
    expect(sockets).toHaveLength(1);
    return sockets[0] as WebSocket;
  }

  it("pings at the welcome's period and stays connected while the server answers", async () => {
    const { declared } = openTool();
    await client.sessions.create({ model: NO_TOOLS, tools: [declared()] });
    const hostId = client.credentials()?.hostId as string;
    const [connection] = fast.app.brain.hosts.ofHost(hostId);
    let pings = 0;
    const enough = deferred();
    serverSocket().on("message", (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === "ping" && ++pings === 8) enough.resolve();
    });
    // Eight periods: long past both the client's (2 periods) and the server's (3) silence limits.
    await within(enough.promise, "8 pings");
    expect(fast.app.brain.hosts.ofHost(hostId).map((c) => c.id)).toEqual([connection?.id]);
    expect(connection?.isOpen).toBe(true);
  });

  it("drops a connection on which nothing arrives any more, and reconnects", async () => {
    const { declared } = openTool();
    await client.sessions.create({ model: NO_TOOLS, tools: [declared()] });
    const hostId = client.credentials()?.hostId as string;
    const [connection] = fast.app.brain.hosts.ofHost(hostId);
    // A half-open connection: the server stops reading, so no pong (or anything) comes back.
    serverSocket().pause();
    const fresh = await until("a new connection", () =>
      fast.app.brain.hosts.ofHost(hostId).find((c) => c.isOpen && c.id !== connection?.id),
    );
    expect(fresh.hostId).toBe(hostId);
  });
});

describe("close", () => {
  it("aborts in-flight handlers, closes the socket, stops reconnecting, and is idempotent", async () => {
    const { declared, contexts, entered } = openTool();
    const session = await brain.sessions.create({ model: script(true), tools: [declared()] });
    await session.send("go");
    await entered(1);
    const hostId = brain.credentials()?.hostId as string;
    await Promise.all([brain.close(), brain.close()]);
    await brain.close();
    expect(contexts[0]?.signal.aborted).toBe(true);
    await until("the server to see the socket close", () => connectionsOf(hostId).length === 0);
    // Two of the server's ticks later (well past the first reconnect delay), still no new connection.
    await serverTicks(server.db.sql, server.app.brain.serverId, 2);
    expect(await count("host_connections", hostId)).toBe(1);
    await expect(brain.sessions.create({ model: NO_TOOLS, tools: [declared()] })).rejects.toMatchObject({
      code: "not_connected",
    });
    // HTTP still works after close.
    const events = [];
    for await (const event of session.events({ after: 0 })) events.push(event.kind);
    expect(events[0]).toBe("session_created");
  });
});

describe("reattachment", () => {
  it("restores a session's handlers under saved credentials without registering a new host", async () => {
    const original = openTool({ finish: true });
    const session = await brain.sessions.create({ model: script(true, true), tools: [original.declared()] });
    await expect(session.send("first")).resolves.toBe("turn 0");
    const saved = JSON.parse(JSON.stringify(brain.credentials()));
    await brain.close();
    const hosts = await count("hosts");

    const restarted = new Brain({ url: server.url, token: server.token, credentials: saved });
    try {
      const again = openTool({ finish: true });
      const handle = await restarted.sessions.get(session.id, { tools: [again.declared()] });
      await expect(handle.send("second")).resolves.toBe("turn 1");
      expect(again.inputs).toEqual([{ id: "2" }]);
      expect(original.inputs).toEqual([{ id: "1" }]);
      expect(await count("hosts")).toBe(hosts);
    } finally {
      await restarted.close();
    }
  });

  it("refuses tools that are not exactly the session's, and tools without the session's host credentials", async () => {
    const { declared } = openTool();
    const session = await brain.sessions.create({ model: NO_TOOLS, tools: [declared()] });
    const other = tool({ name: "other", description: "", input: z.object({}), run: () => {} });
    const fresh = new Brain({ url: server.url, token: server.token });
    try {
      await expect(fresh.sessions.get(session.id, { tools: [other()] })).rejects.toMatchObject({
        code: "tool_mismatch",
      });
      await expect(fresh.sessions.get(session.id, { tools: [declared()] })).rejects.toMatchObject({
        code: "host_required",
      });
      // A plain handle needs no tools.
      await expect(fresh.sessions.get(session.id)).resolves.toMatchObject({ id: session.id });
    } finally {
      await fresh.close();
    }
  });
});
