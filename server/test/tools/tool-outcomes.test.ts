// Tool execution semantics, part 2: outcome envelopes as Brain stores them (journal and
// brain.tool_calls.outcome), output and input validation, JSON-only values, thrown exceptions,
// unknown tools and result content. A real Brain and the public SDK.
import { type PlacedTool, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  callsThenDone,
  endedCall,
  type JournalRow,
  journalOf,
  recordsOfCall,
  serverAndClient,
  type ToolCallRow,
  toolCallsOf,
} from "../../../testkit/tool-harness.js";

const { server, client: brain } = serverAndClient();

interface Ran {
  sessionId: string;
  call: ToolCallRow;
  /** The call's own records: extension events, tool_result, tool_returned, tool_call_ended. */
  records: JournalRow[];
  results: Record<string, unknown>[];
  ended: Record<string, unknown> | undefined;
  text: string;
}

/** Runs one turn in which the scripted model calls `name` once with `input`, and waits for the call to end. */
async function runOnce(placed: PlacedTool, input: unknown = {}, name = placed.name): Promise<Ran> {
  const session = await brain.sessions.create({ model: callsThenDone({ name, input }), tools: [placed] });
  const text = await session.send("go");
  const call = await endedCall(server.db.sql, session.id);
  const records = recordsOfCall(await journalOf(server.db.sql, session.id), call.seq);
  return {
    sessionId: session.id,
    call,
    records,
    results: records.filter((r) => r.kind === "tool_result").map((r) => r.payload),
    ended: records.find((r) => r.kind === "tool_call_ended")?.payload,
    text,
  };
}

/** A tool that finishes with whatever `produce` gives it (or throws what it throws). */
function finishing(produce: () => unknown, output?: z.ZodType): PlacedTool {
  return tool({
    name: "subject",
    description: "Finishes with a prepared value.",
    input: z.object({}),
    output,
    run: (_input, ctx) => ctx.finish(produce() as never),
  })();
}

/** The stored result: the tool_result outcome, which the terminal outcome and the view repeat. */
async function storedOutcome(produce: () => unknown, output?: z.ZodType): Promise<unknown> {
  const ran = await runOnce(finishing(produce, output));
  expect(ran.results).toHaveLength(1);
  const outcome = ran.results[0]?.outcome;
  expect(ran.ended?.outcome).toEqual(outcome);
  expect(ran.call.outcome).toEqual(outcome);
  return outcome;
}

function invalidOutput(): unknown {
  return { status: "error", error: expect.objectContaining({ code: "invalid_output", message: expect.any(String) }) };
}

class Money {
  constructor(readonly cents: number) {}
}

describe("outcome envelopes", () => {
  it("stores ordinary output as { status: ok, value }", async () => {
    expect(await storedOutcome(() => ({ value: "Ada" }))).toEqual({ status: "ok", value: { value: "Ada" } });
    expect(await storedOutcome(() => null)).toEqual({ status: "ok", value: null });
    expect(await storedOutcome(() => [1, "two", { three: 3 }])).toEqual({
      status: "ok",
      value: [1, "two", { three: 3 }],
    });
  });

  it("stores an explicit ok envelope as it is", async () => {
    expect(await storedOutcome(() => ({ status: "ok", value: { n: 1 } }))).toEqual({ status: "ok", value: { n: 1 } });
  });

  it("keeps code, message, retryable and details of an error outcome", async () => {
    const error = {
      code: "record_locked",
      message: "The record is locked by another writer.",
      retryable: true,
      details: { id: "42", holders: ["a", "b"], since: 1700000000000, nested: { deep: [null, false] } },
    };
    expect(await storedOutcome(() => ({ status: "error", error }))).toEqual({ status: "error", error });
  });

  it("turns a malformed envelope into invalid_output", async () => {
    for (const malformed of [
      { status: "error" },
      { status: "ok" },
      { status: "ok", value: 1, extra: true },
      { status: "error", error: { code: "x" } },
      { status: "error", error: { code: "x", message: "m", retryable: "yes" } },
      { status: "timeout", reason: "made up" },
    ]) {
      expect(await storedOutcome(() => malformed)).toEqual(invalidOutput());
    }
  });

  it("passes business data with a reserved status untouched as the value of an explicit ok", async () => {
    const data = { status: "error", error: { code: "card_declined" }, customer: "42" };
    expect(await storedOutcome(() => ({ status: "ok", value: data }))).toEqual({ status: "ok", value: data });
    const nested = { status: "ok", value: { status: "ok" } };
    expect(await storedOutcome(() => ({ status: "ok", value: nested }))).toEqual({ status: "ok", value: nested });
  });

  it("treats other status values as ordinary data", async () => {
    const output = z.object({ status: z.enum(["pending", "shipped"]), id: z.number() });
    expect(await storedOutcome(() => ({ status: "pending", id: 3 }), output)).toEqual({
      status: "ok",
      value: { status: "pending", id: 3 },
    });
    expect(await storedOutcome(() => ({ status: "OK" }))).toEqual({ status: "ok", value: { status: "OK" } });
  });
});

describe("output validation", () => {
  const output = z.object({ value: z.string() });

  it("applies to plain output and to an explicit ok.value", async () => {
    expect(await storedOutcome(() => ({ value: "a" }), output)).toEqual({ status: "ok", value: { value: "a" } });
    expect(await storedOutcome(() => ({ value: 5 }), output)).toEqual(invalidOutput());
    expect(await storedOutcome(() => ({ status: "ok", value: { value: 5 } }), output)).toEqual(invalidOutput());
    expect(await storedOutcome(() => ({ status: "ok", value: { value: "b" } }), output)).toEqual({
      status: "ok",
      value: { value: "b" },
    });
  });

  it("stores the parsed output: a transform that yields JSON passes", async () => {
    const parsed = z
      .object({ cents: z.string() })
      .transform((o) => ({ cents: Number(o.cents), display: `$${(Number(o.cents) / 100).toFixed(2)}` }))
      .pipe(z.object({ cents: z.number(), display: z.string() }));
    expect(await storedOutcome(() => ({ cents: "1250" }), parsed)).toEqual({
      status: "ok",
      value: { cents: 1250, display: "$12.50" },
    });
  });

  it("lets a non-success outcome bypass output validation, and it ends the execution", async () => {
    const late: PromiseSettledResult<unknown>[] = [];
    const strict = tool({
      name: "strict",
      description: "Publishes an error outcome that its output schema would not accept.",
      input: z.object({}),
      output,
      run: async (_input, ctx) => {
        await ctx.emitResult({ status: "error", error: { code: "upstream_down", message: "try later" } });
        late.push(...(await Promise.allSettled([ctx.emit("after", {}), ctx.emitResult({ value: "x" }), ctx.finish()])));
      },
    });
    const ran = await runOnce(strict());
    expect(ran.records.map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
    expect(ran.results[0]?.outcome).toEqual({
      status: "error",
      error: { code: "upstream_down", message: "try later" },
    });
    expect(ran.call.outcome).toEqual({ status: "error", error: { code: "upstream_down", message: "try later" } });
    for (const r of late) expect(r).toMatchObject({ status: "rejected", reason: { code: "execution_finished" } });
  });

  it("ends the execution when a returned value is a non-success outcome", async () => {
    const failing = tool({
      name: "failing",
      description: "Returns an error outcome.",
      input: z.object({}),
      output,
      run: () => ({ status: "error" as const, error: { code: "nope", message: "no" } }),
    });
    const ran = await runOnce(failing());
    expect(ran.records.map((r) => r.kind)).toEqual(["tool_result", "tool_returned", "tool_call_ended"]);
    expect(ran.call.outcome).toEqual({ status: "error", error: { code: "nope", message: "no" } });
  });
});

describe("values must be JSON after transforms", () => {
  it.each([
    ["undefined inside an object", () => ({ a: undefined })],
    ["undefined inside an array", () => [1, undefined]],
    ["NaN", () => ({ n: Number.NaN })],
    ["Infinity", () => ({ n: Number.POSITIVE_INFINITY })],
    ["a BigInt", () => ({ n: BigInt(1) })],
    ["a Date", () => ({ at: new Date(0) })],
    ["a class instance", () => ({ price: new Money(100) })],
    ["a Map", () => new Map([["a", 1]])],
    ["a function", () => ({ f: () => 1 })],
    ["NaN in an explicit ok.value", () => ({ status: "ok", value: Number.NaN })],
  ])("refuses %s with invalid_output", async (_what, produce) => {
    expect(await storedOutcome(produce)).toEqual(invalidOutput());
  });

  it("refuses a value that only a transform turned into a Date", async () => {
    const toDate = z
      .object({ at: z.string() })
      .transform((o) => ({ at: new Date(o.at) }))
      .pipe(z.object({ at: z.any() }));
    expect(await storedOutcome(() => ({ at: "2024-01-01" }), toDate)).toEqual(invalidOutput());
  });
});

describe("failures before and around run", () => {
  it("turns a thrown exception into tool_error", async () => {
    const thrower = tool({
      name: "thrower",
      description: "Throws.",
      input: z.object({}),
      run: async () => {
        throw new Error("database unavailable");
      },
    });
    const ran = await runOnce(thrower());
    expect(ran.call.outcome).toEqual({
      status: "error",
      error: expect.objectContaining({ code: "tool_error", message: expect.stringContaining("database unavailable") }),
    });
    expect(ran.ended?.outcome).toEqual(ran.call.outcome);
    expect(ran.text).toBe("done");
  });

  it("refuses invalid input with invalid_input without running run", async () => {
    let entered = 0;
    const strictInput = tool({
      name: "strict_input",
      description: "Takes a string id.",
      input: z.object({ id: z.string() }),
      run: (_input, ctx) => {
        entered++;
        return ctx.finish();
      },
    });
    const ran = await runOnce(strictInput(), { id: 42 });
    expect(entered).toBe(0);
    expect(ran.call.outcome).toEqual({
      status: "error",
      error: expect.objectContaining({
        code: "invalid_input",
        details: [expect.objectContaining({ path: ["id"] })],
      }),
    });
    const strictObject = tool({
      name: "strict_object",
      description: "Rejects extra properties.",
      input: z.strictObject({ id: z.string() }),
      run: (_input, ctx) => {
        entered++;
        return ctx.finish();
      },
    });
    const extra = await runOnce(strictObject(), { id: "1", extra: true });
    expect(entered).toBe(0);
    expect(extra.call.outcome).toMatchObject({ status: "error", error: { code: "invalid_input" } });
  });

  it("advertises a defaulted field as optional and hands the handler its parsed default", async () => {
    let received: unknown;
    const search = tool({
      name: "search",
      description: "Searches.",
      input: z.object({ query: z.string().transform((q) => q.trim()), limit: z.number().int().default(10) }),
      run: (input, ctx) => {
        received = input;
        return ctx.finish(input);
      },
    });
    expect(search.inputSchema).toMatchObject({ required: ["query"], properties: { limit: { default: 10 } } });
    const ran = await runOnce(search(), { query: "  ada  ", extra: "stripped" });
    const [advertised] = await server.db.sql<{ tools: { name: string; inputSchema: { required: string[] } }[] }[]>`
      SELECT tools FROM sessions WHERE id = ${ran.sessionId}`;
    expect(advertised?.tools[0]?.inputSchema.required).toEqual(["query"]);
    expect(received).toEqual({ query: "ada", limit: 10 });
    expect(ran.call.outcome).toEqual({ status: "ok", value: { query: "ada", limit: 10 } });
  });

  it("ends a call to a tool the session does not have with unknown_tool, without any host call", async () => {
    let entered = 0;
    const known = tool({
      name: "known",
      description: "The only tool of the session.",
      input: z.object({}),
      run: (_input, ctx) => {
        entered++;
        return ctx.finish();
      },
    });
    const ran = await runOnce(known(), {}, "unknown_one");
    expect(entered).toBe(0);
    expect(ran.call).toMatchObject({ tool: "unknown_one", status: "ended" });
    expect(ran.call.outcome).toMatchObject({ status: "error", error: { code: "unknown_tool" } });
    expect(ran.records.map((r) => r.kind)).toEqual(["tool_call_ended"]);
    const [row] = await server.db.sql<{ host_id: string | null; connection_id: string | null }[]>`
      SELECT host_id, connection_id FROM calls WHERE session_id = ${ran.sessionId} AND seq = ${ran.call.seq}`;
    expect(row).toEqual({ host_id: null, connection_id: null });
    expect(ran.text).toBe("done");

    // A session without any tools (and no host) gets the same answer.
    const bare = await brain.sessions.create({ model: callsThenDone({ name: "anything", input: {} }) });
    await expect(bare.send("go")).resolves.toBe("done");
    const [call] = await toolCallsOf(server.db.sql, bare.id);
    expect(call?.outcome).toMatchObject({ status: "error", error: { code: "unknown_tool" } });
  });
});

describe("result content", () => {
  it("rides along with the result and never replaces the structured output", async () => {
    const summarize = tool({
      name: "summarize",
      description: "Publishes results with model-facing text.",
      input: z.object({}),
      output: z.object({ words: z.number() }),
      run: async (_input, ctx) => {
        await ctx.emitResult({ words: 120 }, { content: "A 120-word summary." });
        // Content does not bypass output validation.
        return ctx.finish({ words: "many" } as never, { content: "Looks fine, but is not." });
      },
    });
    const ran = await runOnce(summarize());
    expect(ran.results).toEqual([
      { call: ran.call.seq, outcome: { status: "ok", value: { words: 120 } }, content: "A 120-word summary." },
      { call: ran.call.seq, outcome: invalidOutput(), content: "Looks fine, but is not." },
    ]);
    expect(ran.call.outcome).toEqual(invalidOutput());
  });

  it("does not change the failure status of an error outcome", async () => {
    const error = { code: "too_long", message: "The document exceeds the limit.", retryable: false };
    const ran = await runOnce(
      tool({
        name: "summarize",
        description: "Fails with model-facing text.",
        input: z.object({}),
        run: (_input, ctx) =>
          ctx.finish({ status: "error", error }, { content: "The document is too long to summarize." }),
      })(),
    );
    expect(ran.results).toEqual([
      { call: ran.call.seq, outcome: { status: "error", error }, content: "The document is too long to summarize." },
    ]);
    expect(ran.ended).toEqual({ call: ran.call.seq, outcome: { status: "error", error } });
    expect(ran.call.outcome).toEqual({ status: "error", error });
  });
});
