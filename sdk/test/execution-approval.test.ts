import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tool } from "../src/tool.js";
import { start } from "./execution-support.js";
import { SESSION_ID, settle } from "./recording-channel.js";

// The approval predicate of a host tool: asked of the parsed input before the handler, its answer
// sent first; true (or a throw) means the handler does not run and nothing else is sent.

describe("approval predicates", () => {
  it("false: the answer goes out first, then the handler runs", async () => {
    const asked: unknown[] = [];
    const { channel, started } = start(() => ({ ok: 1 }), {
      approval: (input: unknown) => {
        asked.push(input);
        return false;
      },
    });
    await started;
    await settle();
    expect(asked).toEqual([{ id: "a" }]);
    expect(channel.frames[0]).toEqual(
      expect.objectContaining({ type: "approval", sessionId: SESSION_ID, sequence: 7, required: false }),
    );
    expect(channel.types()).toEqual(["approval", "return"]);
  });

  it("true: only the answer is sent, the handler never runs, and the execution ends", async () => {
    let ran = false;
    const { channel, started, endedCount, execution } = start(() => (ran = true), {
      approval: async () => true,
    });
    await started;
    await settle();
    expect(ran).toBe(false);
    expect(channel.frames).toEqual([expect.objectContaining({ type: "approval", required: true })]);
    expect(execution.ended).toBe(true);
    expect(endedCount()).toBe(1);
  });

  it("a predicate that throws or rejects holds the call", async () => {
    for (const approval of [
      () => {
        throw new Error("down");
      },
      () => Promise.reject(new Error("down")),
    ]) {
      let ran = false;
      const { channel, started } = start(() => (ran = true), { approval });
      await started;
      await settle();
      expect(ran).toBe(false);
      expect(channel.frames).toEqual([expect.objectContaining({ type: "approval", required: true })]);
    }
  });

  it("an approved call runs without asking the predicate", async () => {
    let asked = 0;
    let ran = false;
    const { channel, started } = start(
      () => {
        ran = true;
      },
      {
        approval: () => {
          asked++;
          return true;
        },
      },
      { approved: true },
    );
    await started;
    await settle();
    expect(asked).toBe(0);
    expect(ran).toBe(true);
    expect(channel.types()).not.toContain("approval");
  });

  it("invalid input is refused before the predicate is asked", async () => {
    let asked = 0;
    const { channel, started } = start(
      () => 1,
      {
        approval: () => {
          asked++;
          return false;
        },
      },
      { input: { id: 5 } },
    );
    await started;
    await settle();
    expect(asked).toBe(0);
    expect(channel.types()).toEqual(["finish"]);
  });

  it("is refused on a tool without run: only a host can ask it", () => {
    expect(() =>
      tool({
        name: "d",
        description: "",
        input: z.object({}),
        approval: () => true,
        implementation: () => ({ type: "http_json", method: "GET", path: "/" }),
      }),
    ).toThrow(expect.objectContaining({ code: "invalid_tool" }));
  });
});
