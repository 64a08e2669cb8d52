// Tool execution semantics: dispatch (intent before effect, sent once), the run context, and
// return versus finish. A real Brain (own database, real socket), the public SDK.
import { Brain, type ToolContext, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../../testkit/brain.js";
import {
  callsThenDone,
  deferred,
  type JournalRow,
  journalOf,
  recordAt,
  recordsOfCall,
  serverAndClient,
  type ToolCallRow,
  toolCall,
  toolCallsOf,
  until,
  within,
} from "../../../testkit/tool-harness.js";
import { serverTicks as ticks } from "../../../testkit/wait.js";

const { server, client: brain } = serverAndClient();

/** Resolves once this server has completed `n` heartbeat/recovery ticks that started after now. */
function serverTicks(n: number): Promise<void> {
  return ticks(server.db.sql, server.app.brain.serverId, n);
}

function kinds(rows: JournalRow[]): string[] {
  return rows.map((r) => r.kind);
}

describe("dispatch", () => {
  it("commits tool_call_started and the call row before the invocation is sent, and sends it once", async () => {
    const seen: { record: JournalRow | undefined; call: ToolCallRow | undefined; ctx: ToolContext }[] = [];
    const probe = tool({
      name: "probe",
      description: "Looks at the journal from inside the handler.",
      input: z.object({ id: z.string() }),
      run: async (_input, ctx) => {
        // Read from the test's own pool: only committed rows are visible here.
        const record = await recordAt(server.db.sql, ctx.sessionId, ctx.sequence);
        const call = await toolCall(server.db.sql, ctx.sessionId, ctx.sequence);
        seen.push({ record, call, ctx });
        return ctx.finish({ ok: true });
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "probe", input: { id: "42" } }),
      tools: [probe()],
    });
    await expect(session.send("go")).resolves.toBe("done");

    expect(seen).toHaveLength(1);
    const [{ record, call, ctx }] = seen as [(typeof seen)[number]];
    expect(record).toMatchObject({ seq: ctx.sequence, kind: "tool_call_started" });
    expect(record?.payload).toMatchObject({ tool: "probe", input: { id: "42" } });
    expect(call).toMatchObject({ seq: ctx.sequence, tool: "probe", status: "running" });

    // A while later (two recovery sweeps of the server, which re-dispatches pending calls) the
    // handler has still been entered exactly once, and the journal holds one intent.
    await serverTicks(2);
    expect(seen).toHaveLength(1);
    const journal = await journalOf(server.db.sql, session.id);
    expect(journal.filter((r) => r.kind === "tool_call_started")).toHaveLength(1);
    expect((await toolCallsOf(server.db.sql, session.id)).map((c) => c.status)).toEqual(["ended"]);
  });
});

describe("the run context", () => {
  it("names the call (sessionId, sequence) and carries frozen options, the deadline and a live signal", async () => {
    const observed = deferred<{
      ctx: ToolContext<{ prefix: string; nested: { tags: string[] } }>;
      now: number;
      mutation: unknown;
      nestedMutation: unknown;
    }>();
    const lookup = tool({
      name: "lookup",
      description: "Look up one record.",
      input: z.object({ id: z.string() }),
      options: z.object({
        prefix: z.string().transform((p) => `${p}:`),
        nested: z.object({ tags: z.array(z.string()) }),
      }),
      run: async (_input, ctx) => {
        const attempt = (mutate: () => void): unknown => {
          try {
            mutate();
            return null;
          } catch (err) {
            return err;
          }
        };
        const options = ctx.options as { prefix: string; nested: { tags: string[] } };
        observed.resolve({
          ctx,
          now: Date.now(),
          mutation: attempt(() => {
            options.prefix = "changed";
          }),
          nestedMutation: attempt(() => {
            options.nested.tags.push("more");
          }),
        });
        return ctx.finish(null);
      },
    });
    const before = Date.now();
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "lookup", input: { id: "7" } }),
      tools: [lookup({ prefix: "customer", nested: { tags: ["a"] } })],
      timeoutMs: 120_000,
    });
    await expect(session.send("go")).resolves.toBe("done");
    const { ctx, now, mutation, nestedMutation } = await observed.promise;

    expect(ctx.sessionId).toBe(session.id);
    const started = await recordAt(server.db.sql, session.id, ctx.sequence);
    expect(started?.kind).toBe("tool_call_started");

    // Parsed (the transform ran) and frozen all the way down; writes throw in strict mode.
    expect(ctx.options).toEqual({ prefix: "customer:", nested: { tags: ["a"] } });
    expect(Object.isFrozen(ctx.options)).toBe(true);
    expect(Object.isFrozen(ctx.options.nested.tags)).toBe(true);
    expect(mutation).toBeInstanceOf(TypeError);
    expect(nestedMutation).toBeInstanceOf(TypeError);

    // The caller-owned absolute deadline: here the session's, 120 s from its creation.
    expect(typeof ctx.deadline).toBe("number");
    const deadline = ctx.deadline as number;
    expect(deadline).toBeGreaterThan(now);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 120_000);
    expect(deadline).toBeGreaterThanOrEqual(before + 120_000);
    expect(started?.payload.deadline).toBe(deadline);
    expect((await toolCall(server.db.sql, session.id, ctx.sequence))?.deadline_at?.getTime()).toBe(deadline);

    expect(ctx.signal).toBeInstanceOf(AbortSignal);
    expect(ctx.signal.aborted).toBe(false);
  });

  it("keeps the original deadline for a call that waited for its host", async () => {
    const seen = deferred<ToolContext>();
    const lookup = tool({
      name: "lookup",
      description: "Served after a restart.",
      input: z.object({}),
      run: (_input, ctx) => {
        seen.resolve(ctx);
        return ctx.finish("late but served");
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "lookup", input: {} }),
      tools: [lookup()],
      timeoutMs: 600_000,
    });
    const credentials = brain.credentials();
    await brain.close();
    // No host connected: the call is committed and waits, pending.
    const observer = new Brain({ url: server.url, token: server.token });
    const restarted = new Brain({ url: server.url, token: server.token, credentials });
    try {
      const turn = (await observer.sessions.get(session.id)).send("go");
      const pending = await until("the call to wait for its host", async () => {
        const [call] = await toolCallsOf(server.db.sql, session.id);
        return call?.status === "pending" ? call : undefined;
      });
      await restarted.sessions.get(session.id, { tools: [lookup()] });
      await expect(turn).resolves.toBe("done");
      const ctx = await seen.promise;
      expect(ctx.sequence).toBe(pending.seq);
      expect(typeof ctx.deadline).toBe("number");
      const started = await recordAt(server.db.sql, session.id, ctx.sequence);
      expect(ctx.deadline).toBe(started?.payload.deadline);
      expect(ctx.deadline).toBe(pending.deadline_at?.getTime());
    } finally {
      await observer.close();
      await restarted.close();
    }
  });

  it("bounds the deadline by the tool's own timeout", async () => {
    const seen = deferred<ToolContext>();
    const quick = tool({
      name: "quick",
      description: "Has a short run limit.",
      input: z.object({}),
      timeoutMs: 5_000,
      run: (_input, ctx) => {
        seen.resolve(ctx);
        return ctx.finish();
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "quick", input: {} }),
      tools: [quick()],
    });
    await session.send("go");
    const ctx = await seen.promise;
    expect(ctx.deadline).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it("has no deadline (undefined) when nothing bounds it: the default, with no BRAIN_MAX_TOOL_SECS", async () => {
    const unlimited = await startBrain();
    const client = new Brain({ url: unlimited.url, token: unlimited.token });
    try {
      const seen = deferred<ToolContext>();
      const forever = tool({
        name: "forever",
        description: "No run limit.",
        input: z.object({}),
        run: (_input, ctx) => {
          seen.resolve(ctx);
          return ctx.finish();
        },
      });
      const session = await client.sessions.create({
        model: callsThenDone({ name: "forever", input: {} }),
        tools: [forever()],
      });
      await session.send("go");
      const ctx = await seen.promise;
      expect(ctx.deadline).toBeUndefined();
      expect((await recordAt(unlimited.db.sql, session.id, ctx.sequence))?.payload.deadline).toBeNull();
      expect((await toolCall(unlimited.db.sql, session.id, ctx.sequence))?.deadline_at).toBeNull();
    } finally {
      await client.close();
      await unlimited.close();
    }
  });
});

describe("return and finish", () => {
  it("`return value` publishes exactly one result, ends the synchronous phase and leaves the tool open", async () => {
    const seen = deferred<ToolContext>();
    const find = tool({
      name: "find",
      description: "Returns a value without finishing.",
      input: z.object({}),
      output: z.object({ found: z.boolean() }),
      run: (_input, ctx) => {
        seen.resolve(ctx);
        return { found: true };
      },
    });
    const session = await brain.sessions.create({ model: callsThenDone({ name: "find", input: {} }), tools: [find()] });
    await expect(session.send("go")).resolves.toBe("done");
    const ctx = await seen.promise;

    const own = recordsOfCall(await journalOf(server.db.sql, session.id), ctx.sequence);
    expect(own.map((r) => [r.kind, r.payload])).toEqual([
      ["tool_result", { call: ctx.sequence, outcome: { status: "ok", value: { found: true } } }],
      ["tool_returned", { call: ctx.sequence }],
    ]);
    expect(await toolCall(server.db.sql, session.id, ctx.sequence)).toMatchObject({
      status: "returned",
      outcome: null,
    });

    // Still open: a later finish ends it, without another result; the final outcome is the result.
    await ctx.finish();
    const after = recordsOfCall(await journalOf(server.db.sql, session.id), ctx.sequence);
    expect(kinds(after)).toEqual(["tool_result", "tool_returned", "tool_call_ended"]);
    expect(after[2]?.payload).toEqual({ call: ctx.sequence, outcome: { status: "ok", value: { found: true } } });
    expect(await toolCall(server.db.sql, session.id, ctx.sequence)).toMatchObject({
      status: "ended",
      outcome: { status: "ok", value: { found: true } },
    });
  });

  it("`return ctx.finish(value)` publishes one result and ends the execution", async () => {
    const seen = deferred<ToolContext>();
    const lookup = tool({
      name: "lookup",
      description: "Finishes with a value.",
      input: z.object({}),
      run: (_input, ctx) => {
        seen.resolve(ctx);
        return ctx.finish({ value: "Ada" });
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "lookup", input: {} }),
      tools: [lookup()],
    });
    await session.send("go");
    const ctx = await seen.promise;
    const own = recordsOfCall(await journalOf(server.db.sql, session.id), ctx.sequence);
    expect(own.map((r) => [r.kind, r.payload])).toEqual([
      ["tool_result", { call: ctx.sequence, outcome: { status: "ok", value: { value: "Ada" } } }],
      ["tool_call_ended", { call: ctx.sequence, outcome: { status: "ok", value: { value: "Ada" } } }],
    ]);
    expect(await toolCall(server.db.sql, session.id, ctx.sequence)).toMatchObject({
      status: "ended",
      outcome: { status: "ok", value: { value: "Ada" } },
    });
  });

  it("returning nothing publishes no result; a background continuation emits, publishes and finishes after the turn", async () => {
    const gate = deferred();
    const done = deferred<{
      ctx: ToolContext;
      emitted: number;
      resulted: number;
      late: PromiseSettledResult<unknown>[];
    }>();
    const importer = tool({
      name: "importer",
      description: "Continues in the background.",
      input: z.object({}),
      output: z.object({ imported: z.number() }),
      run: (_input, ctx) => {
        void (async () => {
          await gate.promise;
          const emitted = await ctx.emit("import_progress", { rows: 10 });
          const resulted = await ctx.emitResult({ imported: 10 }, { content: "Imported 10 rows." });
          await ctx.finish();
          const late = await Promise.allSettled([
            ctx.emit("too_late", {}),
            ctx.emitResult({ imported: 11 }),
            ctx.finish(),
          ]);
          done.resolve({ ctx, emitted, resulted, late });
        })().catch(done.reject);
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "importer", input: {} }),
      tools: [importer()],
    });
    await expect(session.send("go")).resolves.toBe("done");

    // The turn completed with the tool returned, no result published, and the tool still open.
    const turn = await journalOf(server.db.sql, session.id);
    const call = turn.find((r) => r.kind === "tool_call_started")!.seq;
    const turnEnded = turn.find((r) => r.kind === "activation_ended")!.seq;
    expect(kinds(recordsOfCall(turn, call))).toEqual(["tool_returned"]);
    expect((await toolCall(server.db.sql, session.id, call))?.status).toBe("returned");

    gate.resolve();
    const { ctx, emitted, resulted, late } = await within(done.promise, "the background continuation");
    expect(ctx.sequence).toBe(call);
    expect(emitted).toBeGreaterThan(turnEnded);
    expect(resulted).toBeGreaterThan(emitted);

    const journal = await journalOf(server.db.sql, session.id);
    const own = recordsOfCall(journal, call);
    expect(own.map((r) => [r.seq, r.kind])).toEqual([
      [expect.any(Number), "tool_returned"],
      [emitted, "import_progress"],
      [resulted, "tool_result"],
      [expect.any(Number), "tool_call_ended"],
    ]);
    expect(own[1]?.payload).toEqual({ call, data: { rows: 10 } });
    expect(own[2]?.payload).toEqual({
      call,
      outcome: { status: "ok", value: { imported: 10 } },
      content: "Imported 10 rows.",
    });
    expect(own[3]?.payload).toEqual({ call, outcome: { status: "ok", value: { imported: 10 } } });
    expect(await toolCall(server.db.sql, session.id, call)).toMatchObject({
      status: "ended",
      outcome: { status: "ok", value: { imported: 10 } },
    });
    // After finish, emit, emitResult and finish are refused locally; nothing more was journaled.
    for (const r of late) expect(r).toMatchObject({ status: "rejected", reason: { code: "execution_finished" } });
    expect(journal.some((r) => r.kind === "too_late")).toBe(false);
    // Brain wakes the Agentloop for the later committed observation.
    await until("an activation for the later result", async () =>
      (await journalOf(server.db.sql, session.id)).find(
        (r) =>
          r.kind === "activation_started" &&
          r.payload.cause === "observations" &&
          (r.payload.observations as number[]).includes(resulted),
      ),
    );
  });
});
