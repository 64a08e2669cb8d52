// The Agentloop folds the records its own server wrote (handed on by the journal writer at commit)
// instead of reading them back: a session whose tools report through this server reads its journal
// once, when its actor starts, however many turns follow. Anything this server did not write and
// describe (another process's commit, a rescan) still makes it read; the two-server and takeover
// suites cover those paths.
import { Brain, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { parseExposition, sampleValue } from "../../../testkit/metrics.js";

const server = startedBeforeAll(() => startBrain());

async function catchUps(): Promise<{ heard: number; read: number }> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } });
  const samples = parseExposition(await res.text());
  return {
    heard: sampleValue(samples, "brain_agentloop_catchups_total", { source: "heard" }),
    read: sampleValue(samples, "brain_agentloop_catchups_total", { source: "read" }),
  };
}

const lookup = tool({
  name: "lookup",
  description: "Emits, then finishes with what it was asked.",
  input: z.object({ id: z.string() }),
  run: async ({ id }, ctx) => {
    await ctx.emit("looking", { id });
    return ctx.finish({ found: id, nested: { z: 1, a: 2 } });
  },
});

describe("records heard from this server's own writer", () => {
  it("carry the Agentloop through tool turns without reading the journal back", async () => {
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const turns = 4;
      const script = [];
      for (let i = 0; i < turns; i++) {
        script.push({
          toolCalls: [
            { name: "lookup", input: { id: `a${i}` } },
            { name: "lookup", input: { id: `b${i}` } },
          ],
        });
        script.push({ text: `answer ${i}` });
      }
      const session = await client.sessions.create({ model: { provider: "scripted", script }, tools: [lookup()] });
      expect(await session.send("turn 0")).toBe("answer 0");
      const afterFirst = await catchUps();
      for (let i = 1; i < turns; i++) expect(await session.send(`turn ${i}`)).toBe(`answer ${i}`);
      const afterAll = await catchUps();

      // Each later turn woke the loop on its tools' results at least once, from what it heard.
      expect(afterAll.heard - afterFirst.heard).toBeGreaterThanOrEqual(turns - 1);
      expect(afterAll.read - afterFirst.read).toBe(0);

      // And the model was told what a read would have told it: every result, in the journal's order.
      const events = [];
      for await (const e of session.events()) events.push(e);
      const results = events.filter((e) => e.kind === "tool_call_ended").length;
      expect(results).toBe(2 * turns);
      const modelCalls = events.filter((e) => e.kind === "model_call_started");
      expect(modelCalls).toHaveLength(2 * turns);
    } finally {
      await client.close();
    }
  });
});
