// The seed's lookup tool, as it stands in the Tool API page, used from an application.
// Run: npm run example -- lookup   (starts a Brain for you unless BRAIN_URL and BRAIN_TOKEN are set)
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";

// "This example assumes your app provides database.get(key), returning { value: string } or null."
const records = new Map([["customer:42", { value: "Ada Lovelace" }]]);
const database = { get: async (key) => records.get(key) ?? null };

export const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => {
    await ctx.emit("lookup_started", { id });
    return ctx.finish((await database.get(`${ctx.options.prefix}${id}`)) ?? null);
  },
});

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "done" }],
    },
    tools: [lookup({ prefix: "customer:" })],
  });
  console.log(await session.send("find customer 42"));
  for await (const e of session.events({ after: 0, follow: false })) {
    console.log(e.sequence, e.kind, JSON.stringify(e.payload));
  }
  console.log(
    `\nThe same journal in SQL:\n  SELECT seq, kind, payload FROM brain.journal WHERE session_id = '${session.id}' ORDER BY seq;`,
  );
} finally {
  await brain.close();
}
