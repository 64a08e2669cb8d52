import { BrainError, MAX_FRAME_BYTES } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../src/context.js";
import { start } from "./execution-support.js";
import { settle } from "./recording-channel.js";

describe("frame size", () => {
  it("sends a result larger than one frame whole (in parts); only the budget bounds it", async () => {
    const blob = "x".repeat(4 * MAX_FRAME_BYTES);
    const { channel, started, execution } = start(() => ({ blob }));
    await started;
    await settle();
    expect(channel.frames).toEqual([
      expect.objectContaining({ type: "return", outcome: { status: "ok", value: { blob } } }),
    ]);
    expect(channel.parts[0]).toBeGreaterThan(4);
    expect(execution.ended).toBe(false);
  });

  it("a refused return ends the execution and aborts ctx.signal with the refusal", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution } = start(
      (_i, c) => {
        ctx = c;
        return { blob: "x" };
      },
      {},
      { manualAcks: true },
    );
    await started;
    await settle();
    channel.reject(1, new BrainError("budget_exceeded"));
    await settle();
    expect(execution.ended).toBe(true);
    expect(ctx.signal.reason).toMatchObject({ code: "budget_exceeded" });
    await expect(ctx.emit("late", {})).rejects.toMatchObject({ code: "execution_finished" });
  });

  it("a result refused for another reason (Brain kept the call open) leaves the execution open", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution } = start(
      (_i, c) => {
        ctx = c;
      },
      {},
      { manualAcks: true },
    );
    await started;
    await settle();
    channel.ack(1); // the return frame
    const emitted = ctx.emitResult({ n: 1 });
    await settle();
    channel.reject(2, new BrainError("invalid_frame"));
    await expect(emitted).rejects.toMatchObject({ code: "invalid_frame" });
    expect(execution.ended).toBe(false);
    expect(ctx.signal.aborted).toBe(false);
  });

  it("rejects an oversize emit with frame_too_large and keeps the call open", async () => {
    let ctx!: ToolContext;
    const { channel, started, execution } = start((_i, c) => {
      ctx = c;
    });
    await started;
    await expect(ctx.emit("big", { blob: "x".repeat(MAX_FRAME_BYTES) })).rejects.toMatchObject({
      code: "frame_too_large",
    });
    expect(execution.ended).toBe(false);
    await expect(ctx.emit("small", {})).resolves.toBeTypeOf("number");
    expect(channel.types()).toEqual(["return", "emit"]);
  });
});
