// Tool execution semantics, part 3: how Brain and the host cooperate. Results are journaled
// before the Agentloop sees them, one host connection serves every session of a client, ending or
// deleting a session releases its handlers, parallel calls run concurrently, and the server side
// of the host protocol (refusals after finish, reserved kinds, one invoke per call) seen by a raw
// WebSocket client.
import { Brain, type ToolContext, tool } from "@aexhq/brain";
import type { ServerFrame } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { z } from "zod";
import {
  callsThenDone,
  deferred,
  type JournalRow,
  journalOf,
  recordAt,
  recordsOfCall,
  serverAndClient,
  toolCall,
  toolCallsOf,
  until,
  within,
} from "../../../testkit/tool-harness.js";

const { server, client: brain } = serverAndClient();

function seqOf(journal: JournalRow[], kind: string, call?: number): number[] {
  return journal.filter((r) => r.kind === kind && (call === undefined || r.payload.call === call)).map((r) => r.seq);
}

describe("journal before the Agentloop", () => {
  it("commits every result, return and finish of a round before the next model call", async () => {
    const fastEnded = deferred<number>();
    const observed = deferred<{ modelCallsWhileSlowOpen: number }>();
    const fast = tool({
      name: "fast",
      description: "Finishes at once.",
      input: z.object({}),
      run: (_input, ctx) => {
        fastEnded.resolve(ctx.sequence);
        return ctx.finish({ fast: true });
      },
    });
    const slow = tool({
      name: "slow",
      description: "Returns once the fast call has ended.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const fastCall = await fastEnded.promise;
        await until("the fast call to end", async () => {
          const call = await toolCall(server.db.sql, ctx.sessionId, fastCall);
          return call?.status === "ended";
        });
        // The fast call's result and end are committed, but this call is still in its
        // synchronous phase: the Agentloop must not have called the model again.
        const journal = await journalOf(server.db.sql, ctx.sessionId);
        observed.resolve({ modelCallsWhileSlowOpen: seqOf(journal, "model_call_started").length });
        await ctx.emit("slow_progress", { half: true });
        return { slow: true };
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "slow", input: {} }, { name: "fast", input: {} }),
      tools: [slow(), fast()],
    });
    await expect(session.send("go")).resolves.toBe("done");
    expect((await observed.promise).modelCallsWhileSlowOpen).toBe(1);

    const journal = await journalOf(server.db.sql, session.id);
    const [slowCall, fastCall] = seqOf(journal, "tool_call_started") as [number, number];
    const [, second] = seqOf(journal, "model_call_started") as [number, number];
    const published = [
      ...seqOf(journal, "tool_result", slowCall),
      ...seqOf(journal, "tool_returned", slowCall),
      ...seqOf(journal, "slow_progress", slowCall),
      ...seqOf(journal, "tool_result", fastCall),
      ...seqOf(journal, "tool_call_ended", fastCall),
    ];
    expect(published).toHaveLength(5);
    for (const seq of published) expect(second).toBeGreaterThan(seq);
    // The scripted second step ("done") ran only after: its end and the answer follow.
    const [, secondEnded] = seqOf(journal, "model_call_ended") as [number, number];
    expect(journal.find((r) => r.seq === secondEnded)?.payload).toMatchObject({
      call: second,
      response: { text: "done" },
    });
    expect(seqOf(journal, "assistant_message")[0]).toBeGreaterThan(secondEnded);
  });
});

describe("the host connection", () => {
  it("is one per Brain client, shared by several sessions", async () => {
    const served: { sessionId: string; n: number }[] = [];
    const echo = tool({
      name: "echo",
      description: "Echoes n.",
      input: z.object({ n: z.number() }),
      run: (input, ctx) => {
        served.push({ sessionId: ctx.sessionId, n: input.n });
        return ctx.finish(input);
      },
    });
    const sessions = [];
    for (const n of [1, 2, 3]) {
      sessions.push(
        await brain.sessions.create({ model: callsThenDone({ name: "echo", input: { n } }), tools: [echo()] }),
      );
    }
    const hostId = brain.credentials()?.hostId;
    expect(hostId).toBeDefined();
    for (const s of sessions) expect(s.info.hostId).toBe(hostId);
    expect(server.app.brain.hosts.ofHost(hostId as string)).toHaveLength(1);

    await expect(Promise.all(sessions.map((s) => s.send("go")))).resolves.toEqual(["done", "done", "done"]);
    expect(served.sort((a, b) => a.n - b.n)).toEqual(sessions.map((s, i) => ({ sessionId: s.id, n: i + 1 })));
    const [connections] = await server.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM host_connections WHERE host_id = ${hostId as string}`;
    expect(connections?.n).toBe(1);
    const [hosts] = await server.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM hosts WHERE id = ${hostId as string}`;
    expect(hosts?.n).toBe(1);

    // Another client is another host with its own connection.
    const other = new Brain({ url: server.url, token: server.token });
    try {
      await other.sessions.create({ model: callsThenDone({ name: "echo", input: { n: 4 } }), tools: [echo()] });
      expect(other.credentials()?.hostId).not.toBe(hostId);
    } finally {
      await other.close();
    }
  });

  /** A tool that stays open (returns nothing, never finishes) and hands out its context. */
  function holding() {
    const contexts: ToolContext[] = [];
    const entered = deferred<ToolContext>();
    const hold = tool({
      name: "hold",
      description: "Stays open.",
      input: z.object({}),
      run: (_input, ctx) => {
        contexts.push(ctx);
        entered.resolve(ctx);
      },
    });
    return { hold, contexts, entered: entered.promise };
  }

  function aborted(signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve) => {
      if (signal.aborted) resolve(signal.reason);
      else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
    });
  }

  it("releases a session's handlers when it ends: open calls end cancelled and their signals abort", async () => {
    const { hold, contexts, entered } = holding();
    const echo = tool({ name: "echo", description: "", input: z.object({}), run: (_i, ctx) => ctx.finish("echo") });
    const ending = await brain.sessions.create({ model: callsThenDone({ name: "hold", input: {} }), tools: [hold()] });
    const staying = await brain.sessions.create({ model: callsThenDone({ name: "echo", input: {} }), tools: [echo()] });
    await expect(ending.send("go")).resolves.toBe("done");
    const ctx = await entered;
    expect((await toolCall(server.db.sql, ending.id, ctx.sequence))?.status).toBe("returned");

    await ending.end();
    const reason = await within(aborted(ctx.signal), "the handler's signal to abort");
    expect(reason).toMatchObject({ code: "call_ended", details: { status: "cancelled" } });
    const journal = await journalOf(server.db.sql, ending.id);
    const ended = recordsOfCall(journal, ctx.sequence).find((r) => r.kind === "tool_call_ended");
    expect(ended?.payload).toEqual({ call: ctx.sequence, outcome: { status: "cancelled", cause: "session_ended" } });
    expect(await toolCall(server.db.sql, ending.id, ctx.sequence)).toMatchObject({
      status: "ended",
      outcome: { status: "cancelled", cause: "session_ended" },
    });
    expect(journal.at(-1)?.kind).toBe("session_ended");
    await expect(ctx.emit("after_end", {})).rejects.toMatchObject({ code: "execution_finished" });

    // The other session on the same connection is untouched.
    await expect(staying.send("go")).resolves.toBe("done");
    expect((await toolCallsOf(server.db.sql, staying.id))[0]?.outcome).toEqual({ status: "ok", value: "echo" });
    expect(contexts).toHaveLength(1);
  });

  it("releases a session's handlers when it is deleted", async () => {
    const { hold, entered } = holding();
    const doomed = await brain.sessions.create({ model: callsThenDone({ name: "hold", input: {} }), tools: [hold()] });
    await doomed.send("go");
    const ctx = await entered;
    await doomed.delete();
    expect(await within(aborted(ctx.signal), "the handler's signal to abort")).toMatchObject({
      details: { status: "cancelled" },
    });
    expect(await journalOf(server.db.sql, doomed.id)).toEqual([]);
    await expect(ctx.finish()).rejects.toMatchObject({ code: "execution_finished" });
  });
});

describe("parallel calls", () => {
  it("runs every call of one model step concurrently", async () => {
    const expected = 3;
    const barrier = deferred();
    const started: string[] = [];
    const worker = tool({
      name: "worker",
      description: "Waits until all workers have started.",
      input: z.object({ id: z.string() }),
      run: async (input, ctx) => {
        started.push(input.id);
        if (started.length === expected) barrier.resolve();
        // Only opens when every call is running at the same time: sequential dispatch never gets here.
        await within(barrier.promise, `all ${expected} workers to start`, 10_000);
        return ctx.finish({ id: input.id, concurrent: started.length });
      },
    });
    const other = tool({
      name: "other",
      description: "A second tool in the same step.",
      input: z.object({}),
      run: (_input, ctx) => ctx.finish("other"),
    });
    const session = await brain.sessions.create({
      model: callsThenDone(
        { name: "worker", input: { id: "a" } },
        { name: "worker", input: { id: "b" } },
        { name: "other", input: {} },
        { name: "worker", input: { id: "c" } },
      ),
      tools: [worker(), other()],
    });
    await expect(session.send("go")).resolves.toBe("done");
    expect([...started].sort()).toEqual(["a", "b", "c"]);
    const calls = await toolCallsOf(server.db.sql, session.id);
    expect(calls.map((c) => [c.tool, c.status, c.outcome])).toEqual([
      ["worker", "ended", { status: "ok", value: { id: "a", concurrent: 3 } }],
      ["worker", "ended", { status: "ok", value: { id: "b", concurrent: 3 } }],
      ["other", "ended", { status: "ok", value: "other" }],
      ["worker", "ended", { status: "ok", value: { id: "c", concurrent: 3 } }],
    ]);
  });
});

/** A host speaking the wire protocol by hand, to see what the server does with frames the SDK never sends. */
class RawHost {
  readonly frames: ServerFrame[] = [];
  private readonly waiters = new Set<() => void>();
  private nextId = 1;

  private constructor(
    readonly id: string,
    readonly ws: WebSocket,
  ) {
    ws.on("message", (data) => {
      this.frames.push(JSON.parse(String(data)) as ServerFrame);
      for (const wake of [...this.waiters]) wake();
    });
  }

  static async connect(url: string, token: string): Promise<RawHost> {
    const host = await api<{ id: string; token: string }>(url, token, "POST", "/v1/hosts", {});
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/v1/hosts/${host.id}/connect`, {
      headers: { authorization: `Bearer ${host.token}` },
    });
    const raw = new RawHost(host.id, ws);
    await raw.next((f) => f.type === "welcome");
    return raw;
  }

  /** Resolves with the first frame received (ever) that matches. */
  next<T extends ServerFrame>(match: (f: ServerFrame) => f is T): Promise<T>;
  next(match: (f: ServerFrame) => boolean): Promise<ServerFrame>;
  next(match: (f: ServerFrame) => boolean): Promise<ServerFrame> {
    return within(
      new Promise<ServerFrame>((resolve) => {
        const check = () => {
          const found = this.frames.find(match);
          if (found === undefined) return;
          this.waiters.delete(check);
          resolve(found);
        };
        this.waiters.add(check);
        check();
      }),
      "a server frame",
    );
  }

  /** Sends a host frame with a fresh id; resolves with its ack or reject. */
  async send(frame: Record<string, unknown>): Promise<ServerFrame> {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ ...frame, id }));
    return this.next((f) => (f.type === "ack" || f.type === "reject") && f.id === id);
  }

  close(): void {
    this.ws.terminate();
  }
}

async function api<T>(url: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

describe("the host protocol, server side", () => {
  it("refuses reserved kinds, unknown calls and every frame after finish; sends the invocation once", async () => {
    const raw = await RawHost.connect(server.url, server.token);
    try {
      const placement = {
        name: "raw",
        description: "Served by hand.",
        inputSchema: { type: "object" },
        outputSchema: null,
        env: { type: "host", name: "application" },
      };
      const session = await api<{ id: string }>(server.url, server.token, "POST", "/v1/sessions", {
        model: callsThenDone({ name: "raw", input: { id: "1" } }),
        tools: [placement],
        hostId: raw.id,
      });
      await api(server.url, server.token, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
      const invoke = await raw.next((f): f is Extract<ServerFrame, { type: "invoke" }> => f.type === "invoke");
      expect(invoke).toMatchObject({ sessionId: session.id, tool: "raw", input: { id: "1" } });
      // Intent before effect: the record and the dispatched call row were committed before the frame.
      expect(await recordAt(server.db.sql, session.id, invoke.sequence)).toMatchObject({ kind: "tool_call_started" });
      expect((await toolCall(server.db.sql, session.id, invoke.sequence))?.status).toBe("running");

      const call = { sessionId: session.id, sequence: invoke.sequence };
      const rejected = (code: string) => ({ type: "reject", error: expect.objectContaining({ code }) });
      expect(await raw.send({ type: "emit", ...call, kind: "tool_result", data: {} })).toMatchObject(
        rejected("reserved_kind"),
      );
      expect(await raw.send({ type: "emit", ...call, kind: "brain.x", data: {} })).toMatchObject(
        rejected("reserved_kind"),
      );
      expect(await raw.send({ type: "emit", ...call, kind: "Not-A-Kind", data: {} })).toMatchObject(
        rejected("invalid_kind"),
      );
      expect(
        await raw.send({ type: "emit", sessionId: session.id, sequence: invoke.sequence + 100, kind: "x", data: {} }),
      ).toMatchObject(rejected("call_not_found"));

      const progress = await raw.send({ type: "emit", ...call, kind: "progress", data: { pct: 50 } });
      expect(progress).toMatchObject({ type: "ack", sequence: expect.any(Number) });
      const finished = await raw.send({ type: "finish", ...call, outcome: { status: "ok", value: { id: "1" } } });
      expect(finished).toMatchObject({ type: "ack" });
      const endSeq = (finished as Extract<ServerFrame, { type: "ack" }>).sequence as number;
      expect(await recordAt(server.db.sql, session.id, endSeq)).toMatchObject({ kind: "tool_call_ended" });

      for (const frame of [
        { type: "emit", ...call, kind: "late", data: {} },
        { type: "result", ...call, outcome: { status: "ok", value: 2 } },
        { type: "return", ...call },
        { type: "finish", ...call },
      ]) {
        expect(await raw.send(frame)).toMatchObject(rejected("call_ended"));
      }

      await until("the activation to end", async () =>
        (await journalOf(server.db.sql, session.id)).some((r) => r.kind === "activation_ended"),
      );
      const journal = await journalOf(server.db.sql, session.id);
      expect(recordsOfCall(journal, invoke.sequence).map((r) => r.kind)).toEqual([
        "progress",
        "tool_result",
        "tool_call_ended",
      ]);
      expect(journal.some((r) => r.kind === "late")).toBe(false);
      expect(raw.frames.filter((f) => f.type === "invoke")).toHaveLength(1);
    } finally {
      raw.close();
    }
  });
});
