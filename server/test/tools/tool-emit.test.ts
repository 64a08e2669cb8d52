// Tool execution semantics: ctx.emit. Each emission resolves with its committed sequence, one
// tool's events keep call order, finish waits for what was admitted before it, later emissions are
// refused, and so are reserved or malformed kinds. A real Brain and the public SDK.
import { type ToolContext, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  callsThenDone,
  deferred,
  type JournalRow,
  journalOf,
  recordAt,
  recordsOfCall,
  serverAndClient,
  within,
} from "../../../testkit/tool-harness.js";

const { server, client: brain } = serverAndClient();

describe("ctx.emit", () => {
  it("resolves with the committed journal sequence of a { call, data } record", async () => {
    const seen = deferred<{ ctx: ToolContext; sequence: number; visible: JournalRow | undefined }>();
    const importer = tool({
      name: "importer",
      description: "Emits, then finishes with the event's sequence.",
      input: z.object({ source: z.string() }),
      run: async (input, ctx) => {
        const sequence = await ctx.emit("import_started", { source: input.source });
        // Committed by the time the promise resolves: another connection sees it.
        const visible = await recordAt(server.db.sql, ctx.sessionId, sequence);
        seen.resolve({ ctx, sequence, visible });
        return ctx.finish({ eventSequence: sequence, imported: 3 });
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "importer", input: { source: "s3://bucket" } }),
      tools: [importer()],
    });
    await session.send("go");
    const { ctx, sequence, visible } = await seen.promise;
    expect(visible).toEqual({
      seq: sequence,
      kind: "import_started",
      payload: { call: ctx.sequence, data: { source: "s3://bucket" } },
    });
    const own = recordsOfCall(await journalOf(server.db.sql, session.id), ctx.sequence);
    expect(own.map((r) => r.kind)).toEqual(["import_started", "tool_result", "tool_call_ended"]);
    expect(own[1]?.payload.outcome).toEqual({ status: "ok", value: { eventSequence: sequence, imported: 3 } });
    expect(own[0]?.seq).toBe(sequence);
  });

  it("keeps one tool's events in call order, and finish waits for every emission admitted before it", async () => {
    const seen = deferred<{
      ctx: ToolContext;
      sequences: number[];
      atFinish: JournalRow[];
      late: PromiseSettledResult<unknown>[];
    }>();
    const stepper = tool({
      name: "stepper",
      description: "Emits without awaiting, then finishes.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const emits = Array.from({ length: 12 }, (_, i) => ctx.emit("step", { i }));
        await ctx.finish({ steps: 12 });
        // The moment finish resolves: what is committed?
        const atFinish = await journalOf(server.db.sql, ctx.sessionId);
        const sequences = await Promise.all(emits);
        const late = await Promise.allSettled([
          ctx.emit("step", { i: 12 }),
          ctx.emitResult({ more: true }),
          ctx.finish(),
        ]);
        seen.resolve({ ctx, sequences, atFinish, late });
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "stepper", input: {} }),
      tools: [stepper()],
    });
    await session.send("go");
    const { ctx, sequences, atFinish, late } = await within(seen.promise, "the stepper handler");

    const own = recordsOfCall(atFinish, ctx.sequence);
    expect(own.map((r) => r.kind)).toEqual([...Array(12).fill("step"), "tool_result", "tool_call_ended"]);
    expect(own.slice(0, 12).map((r) => r.payload.data)).toEqual(Array.from({ length: 12 }, (_, i) => ({ i })));
    expect(own.slice(0, 12).map((r) => r.seq)).toEqual(sequences);
    for (const r of late) expect(r).toMatchObject({ status: "rejected", reason: { code: "execution_finished" } });
    const journal = await journalOf(server.db.sql, session.id);
    expect(recordsOfCall(journal, ctx.sequence)).toHaveLength(14);
  });

  it("refuses reserved and malformed kinds", async () => {
    const seen = deferred<{ ctx: ToolContext; refused: PromiseSettledResult<number>[]; ok: number }>();
    const kinder = tool({
      name: "kinder",
      description: "Tries kinds.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const refused = await Promise.allSettled(
          [
            "tool_result",
            "tool_call_ended",
            "session_ended",
            "brain.x",
            "brain.progress",
            "Progress",
            "1st",
            "",
            "has space",
            `a${"b".repeat(64)}`,
          ].map((kind) => ctx.emit(kind, {})),
        );
        const ok = await ctx.emit("a.b:c-d_1", { fine: true });
        seen.resolve({ ctx, refused, ok });
        return ctx.finish();
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "kinder", input: {} }),
      tools: [kinder()],
    });
    await session.send("go");
    const { ctx, refused, ok } = await seen.promise;
    expect(refused.map((r) => (r.status === "rejected" ? (r.reason as { code: string }).code : "accepted"))).toEqual([
      "reserved_kind",
      "reserved_kind",
      "reserved_kind",
      "reserved_kind",
      "reserved_kind",
      "invalid_kind",
      "invalid_kind",
      "invalid_kind",
      "invalid_kind",
      "invalid_kind",
    ]);
    const own = recordsOfCall(await journalOf(server.db.sql, session.id), ctx.sequence);
    expect(own.map((r) => [r.seq, r.kind])).toEqual([
      [ok, "a.b:c-d_1"],
      [expect.any(Number), "tool_call_ended"],
    ]);
  });
});
