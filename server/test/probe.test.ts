import { Brain, tool } from "@aexhq/brain";
import { it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../testkit/brain.js";
import { callsThenDone, journalOf, toolCallsOf } from "./tool-harness.js";

it("probe", async () => {
  const server = await startBrain();
  const brain = new Brain({ url: server.url, token: server.token });
  try {
    const t = tool({
      name: "t",
      description: "d",
      input: z.object({ a: z.number().default(3) }),
      run: async (i, ctx) => {
        await ctx.emit("x_y", { i });
        return { got: i };
      },
    });
    const s = await brain.sessions.create({ model: callsThenDone({ name: "t", input: {} }), tools: [t()] });
    console.log(await s.send("hi"));
    for (const r of await journalOf(server.db.sql, s.id)) console.log(r.seq, r.kind, JSON.stringify(r.payload));
    console.log(await toolCallsOf(server.db.sql, s.id));
  } finally {
    await brain.close();
    await server.close();
  }
});
