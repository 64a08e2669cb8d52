import { BrainError } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolContext } from "../src/context.js";
import { start } from "./execution-support.js";
import { SESSION_ID, settle } from "./recording-channel.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("input validation", () => {
  it("finishes with invalid_input (with the issues) and never runs the handler", async () => {
    let ran = false;
    const { channel, started } = start(() => (ran = true), {}, { input: { id: 5 } });
    await started;
    await settle();
    expect(ran).toBe(false);
    expect(channel.frames).toEqual([
      expect.objectContaining({
        type: "finish",
        sessionId: SESSION_ID,
        sequence: 7,
        outcome: {
          status: "error",
          error: expect.objectContaining({
            code: "invalid_input",
            details: [expect.objectContaining({ path: ["id"] })],
          }),
        },
      }),
    ]);
  });

  it("hands the handler the parsed input with defaults and transforms applied", async () => {
    let seen: unknown;
    const input = z.object({ id: z.string().transform((s) => s.toUpperCase()), n: z.number().default(3) });
    const { started } = start(
      (i) => {
        seen = i;
      },
      { input },
      { input: { id: "ab" } },
    );
    await started;
    expect(seen).toEqual({ id: "AB", n: 3 });
  });

  it("runs nothing and sends nothing when the deadline has passed on arrival", async () => {
    let ran = false;
    let validated = false;
    const input = z.object({}).refine(() => (validated = true));
    const { channel, started, execution } = start(() => (ran = true), { input }, { deadline: Date.now() - 1 });
    await started;
    await settle();
    expect([ran, validated, channel.frames.length, execution.ended]).toEqual([false, false, 0, true]);
  });

  it("runs nothing and sends nothing when the deadline passes during async validation", async () => {
    let ran = false;
    const input = z.object({}).refine(async () => {
      await sleep(60);
      return true;
    });
    const { channel, started } = start(() => (ran = true), { input }, { deadline: Date.now() + 20 });
    await started;
    await settle();
    expect(ran).toBe(false);
    expect(channel.frames).toEqual([]);
  });

  it("runs nothing and sends nothing when cancelled during async validation", async () => {
    let ran = false;
    const input = z.object({}).refine(async () => {
      await sleep(20);
      return true;
    });
    const { channel, started, execution } = start(() => (ran = true), { input });
    execution.interrupt("cancelled");
    await started;
    await settle();
    expect(ran).toBe(false);
    expect(channel.frames).toEqual([]);
  });
});

describe("return, emitResult and finish", () => {
  it("a returned value publishes one result (return frame) and leaves the call open", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution } = start((_i, c) => {
      ctx = c;
      return { found: true };
    });
    await started;
    await settle();
    expect(channel.frames).toEqual([
      { type: "return", id: 1, sessionId: SESSION_ID, sequence: 7, outcome: { status: "ok", value: { found: true } } },
    ]);
    expect(execution.ended).toBe(false);
    await expect(ctx.emitResult({ more: 1 }, { content: "one more" })).resolves.toBe(101);
    await expect(ctx.finish()).resolves.toBeUndefined();
    expect(channel.frames.slice(1)).toEqual([
      expect.objectContaining({ type: "result", outcome: { status: "ok", value: { more: 1 } }, content: "one more" }),
      { type: "finish", id: 3, sessionId: SESSION_ID, sequence: 7 },
    ]);
  });

  it("returning nothing sends a return frame without an outcome", async () => {
    const { channel, started } = start(async () => {});
    await started;
    await settle();
    expect(channel.frames).toEqual([{ type: "return", id: 1, sessionId: SESSION_ID, sequence: 7 }]);
  });

  it("`return ctx.finish(value)` publishes the value once, in the finish frame, and nothing after", async () => {
    const { channel, started, execution } = start(async (_i, ctx) => ctx.finish({ v: 1 }, { content: "done" }));
    await started;
    await settle();
    expect(channel.frames).toEqual([
      {
        type: "finish",
        id: 1,
        sessionId: SESSION_ID,
        sequence: 7,
        outcome: { status: "ok", value: { v: 1 } },
        content: "done",
      },
    ]);
    expect(execution.ended).toBe(true);
  });

  it("after finish, emit, emitResult and finish reject with execution_finished", async () => {
    let ctx!: ToolContext;
    const { started } = start(async (_i, c) => {
      ctx = c;
      await c.finish();
    });
    await started;
    for (const attempt of [() => ctx.emit("late", {}), () => ctx.emitResult(1), () => ctx.finish()]) {
      await expect(attempt()).rejects.toMatchObject({ code: "execution_finished" });
    }
  });

  it("a handler returning while its finish is still being validated sends nothing for its return", async () => {
    const output = z.string().refine(async () => {
      await sleep(20);
      return true;
    });
    const { channel, started } = start(
      (_i, ctx) => {
        void ctx.finish("x");
        return "ignored";
      },
      { output },
    );
    await started;
    await sleep(40);
    expect(channel.frames).toEqual([
      expect.objectContaining({ type: "finish", outcome: { status: "ok", value: "x" } }),
    ]);
  });

  it("a thrown exception finishes the call with tool_error", async () => {
    const { channel, started, execution } = start(async () => {
      throw new Error("database down");
    });
    await started;
    await settle();
    expect(channel.frames).toEqual([
      expect.objectContaining({
        type: "finish",
        outcome: { status: "error", error: { code: "tool_error", message: "database down" } },
      }),
    ]);
    expect(execution.ended).toBe(true);
  });

  it("returning a non-success outcome terminates the call", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution } = start((_i, c) => {
      ctx = c;
      return { status: "error", error: { code: "not_found", message: "no" } };
    });
    await started;
    await settle();
    expect(channel.frames[0]).toMatchObject({
      type: "return",
      outcome: { status: "error", error: { code: "not_found" } },
    });
    expect(execution.ended).toBe(true);
    await expect(ctx.emit("x", 1)).rejects.toMatchObject({ code: "execution_finished" });
  });

  it("an invalid emitted result becomes invalid_output and ends the call", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution } = start(
      (_i, c) => {
        ctx = c;
      },
      { output: z.object({ n: z.number() }) },
    );
    await started;
    await ctx.emitResult({ n: "not a number" });
    expect(channel.frames.at(-1)).toMatchObject({ type: "result", outcome: { error: { code: "invalid_output" } } });
    expect(execution.ended).toBe(true);
    await expect(ctx.finish()).rejects.toMatchObject({ code: "execution_finished" });
  });

  it("content rides along with the structured output and never replaces it", async () => {
    const { channel, started } = start((_i, ctx) => ctx.finish({ rows: 3 }, { content: "Three rows." }));
    await started;
    await settle();
    expect(channel.frames[0]).toMatchObject({ outcome: { status: "ok", value: { rows: 3 } }, content: "Three rows." });
  });
});

describe("ordering", () => {
  it("sends frames in call order even when an earlier result's validation is slower", async () => {
    const output = z.object({ n: z.number() }).refine(async () => {
      await sleep(30);
      return true;
    });
    let ctx!: ToolContext;
    const { channel, started } = start(
      (_i, c) => {
        ctx = c;
      },
      { output },
    );
    await started;
    const first = ctx.emitResult({ n: 1 });
    const second = ctx.emit("after_result", { i: 2 });
    const [a, b] = await Promise.all([first, second]);
    expect(channel.frames.slice(1).map((f) => f.type)).toEqual(["result", "emit"]);
    expect(a).toBeLessThan(b);
  });

  it("finish waits for the acks of emissions admitted before it and rejects later ones", async () => {
    let ctx!: ToolContext;
    const { channel, started } = start(
      (_i, c) => {
        ctx = c;
      },
      {},
      { manualAcks: true },
    );
    await started;
    await settle();
    channel.ack(1); // the return frame
    const emitted = ctx.emit("progress", { pct: 50 });
    const finished = ctx.finish({ done: true });
    await expect(ctx.emit("too_late", {})).rejects.toMatchObject({ code: "execution_finished" });
    await settle();
    expect(channel.types()).toEqual(["return", "emit"]);
    channel.ack(2);
    await expect(emitted).resolves.toBeTypeOf("number");
    await settle();
    expect(channel.types()).toEqual(["return", "emit", "finish"]);
    let done = false;
    void finished.then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    channel.ack(3);
    await expect(finished).resolves.toBeUndefined();
  });

  it("a rejected emission rejects its own promise with the server's code and the call goes on", async () => {
    let ctx!: ToolContext;
    const { channel, started } = start(
      (_i, c) => {
        ctx = c;
      },
      {},
      { manualAcks: true },
    );
    await started;
    await settle();
    channel.ack(1); // the return frame
    const emitted = ctx.emit("big", { x: 1 });
    await settle();
    channel.reject(2, new BrainError("budget_exceeded"));
    await expect(emitted).rejects.toMatchObject({ code: "budget_exceeded" });
    const finished = ctx.finish();
    await settle();
    channel.ack(3);
    await expect(finished).resolves.toBeUndefined();
  });
});

describe("emit", () => {
  async function openCall() {
    let ctx!: ToolContext;
    const handle = start((_i, c) => {
      ctx = c;
    });
    await handle.started;
    await settle();
    return { ctx, ...handle };
  }

  it("resolves with the committed journal sequence", async () => {
    const { ctx, channel } = await openCall();
    await expect(ctx.emit("import_started", { source: "s3" })).resolves.toBe(101);
    expect(channel.frames.at(-1)).toEqual({
      type: "emit",
      id: 2,
      sessionId: SESSION_ID,
      sequence: 7,
      kind: "import_started",
      data: { source: "s3" },
    });
  });

  it.each(["tool_result", "session_created", "tool_call_ended", "brain.anything"])(
    "refuses the reserved kind %s locally",
    async (kind) => {
      const { ctx, channel } = await openCall();
      await expect(ctx.emit(kind, {})).rejects.toMatchObject({ code: "reserved_kind" });
      expect(channel.types()).toEqual(["return"]);
    },
  );

  it.each(["", "Upper", "9lives", "has space", "x".repeat(65), "emoji_🙂"])(
    "refuses the malformed kind %j locally",
    async (kind) => {
      const { ctx, channel } = await openCall();
      await expect(ctx.emit(kind, {})).rejects.toMatchObject({ code: "invalid_kind" });
      expect(channel.types()).toEqual(["return"]);
    },
  );

  it.each(["a", "lookup_started", "a.b:c-d_9", "x".repeat(64)])("accepts the kind %j", async (kind) => {
    const { ctx } = await openCall();
    await expect(ctx.emit(kind, null)).resolves.toBeTypeOf("number");
  });

  it.each([
    ["undefined", undefined],
    ["NaN", Number.NaN],
    ["a Date", new Date()],
    ["a BigInt", 1n],
  ])("refuses %s as data", async (_label, data) => {
    const { ctx, channel } = await openCall();
    await expect(ctx.emit("ok_kind", data)).rejects.toBeInstanceOf(BrainError);
    expect(channel.types()).toEqual(["return"]);
  });
});

/** Counts the AbortControllers made until `stop()`. */
function countAbortControllers(): { stop(): number } {
  const Real = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Real {
    constructor() {
      super();
      made++;
    }
  };
  return {
    stop() {
      globalThis.AbortController = Real;
      return made;
    },
  };
}

describe("deadline and cancellation", () => {
  it("exposes the context the spec names", async () => {
    const deadline = Date.now() + 60_000;
    let ctx!: ToolContext;
    const { started, execution } = start(
      (_i, c) => {
        ctx = c;
      },
      {},
      { deadline },
    );
    await started;
    expect([ctx.sessionId, ctx.sequence, ctx.deadline, ctx.signal.aborted]).toEqual([SESSION_ID, 7, deadline, false]);
    expect(Object.isFrozen(ctx.options)).toBe(true);
    expect(typeof ctx.model).toBe("function");
    expect(Object.keys(ctx.environments).sort()).toEqual(
      ["call", "create", "delete", "get", "list", "setup", "update"].sort(),
    );
    execution.interrupt("cancelled");
    // After the call ended, requests are refused locally and nothing is sent.
    await expect(ctx.model({ messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({
      code: "execution_finished",
    });
    await expect(ctx.environments.list()).rejects.toMatchObject({ code: "execution_finished" });
  });

  it("reports an unlimited call's deadline as undefined", async () => {
    let ctx!: ToolContext;
    const { started } = start((_i, c) => {
      ctx = c;
    });
    await started;
    expect(ctx.deadline).toBeUndefined();
  });

  it("aborts ctx.signal with a timeout reason when the deadline passes, and ends the call locally", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution } = start(
      (_i, c) => {
        ctx = c;
      },
      {},
      { deadline: Date.now() + 30 },
    );
    await started;
    await sleep(60);
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.signal.reason).toMatchObject({ code: "call_ended", details: { status: "timeout" } });
    expect(execution.ended).toBe(true);
    await expect(ctx.emitResult(1)).rejects.toMatchObject({ code: "execution_finished" });
    expect(channel.types()).toEqual(["return"]);
  });

  it("ctx.signal is one signal, made when first read, and carries the first reason it was aborted for", async () => {
    let ctx!: ToolContext;
    const { started, execution } = start((_i, c) => {
      ctx = c;
    });
    await started;
    // Nothing read the signal while the call was open; it is made, already aborted, on first read.
    execution.interrupt("cancelled");
    execution.interrupt("timeout");
    const made = countAbortControllers();
    const signal = ctx.signal;
    expect(made.stop()).toBe(1);
    expect(ctx.signal).toBe(signal);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ code: "call_ended", details: { status: "cancelled" } });
  });

  it("a call whose handler never reads ctx.signal makes no AbortSignal", async () => {
    const made = countAbortControllers();
    try {
      const { channel, started } = start((_i, c) => c.finish({ ok: true }));
      await started;
      await settle();
      expect(channel.types()).toEqual(["finish"]);
    } finally {
      expect(made.stop()).toBe(0);
    }
  });

  it("a cancel aborts ctx.signal naming the status; a later finish sends nothing", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution, endedCount } = start(async (_i, c) => {
      ctx = c;
      await new Promise((resolve) => c.signal.addEventListener("abort", resolve));
      return "late";
    });
    await settle();
    execution.interrupt("cancelled");
    await started;
    await settle();
    expect(ctx.signal.reason).toMatchObject({ details: { status: "cancelled" } });
    await expect(ctx.finish("x")).rejects.toMatchObject({ code: "execution_finished" });
    expect(channel.frames).toEqual([]);
    expect(endedCount()).toBe(1);
  });
});
