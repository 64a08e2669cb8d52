// The seed's lookup tool served over HTTP with the Application tool extension: the application
// serves the declaration with the Node adapter (toolHandler), and the session places it at that
// URL, so Brain (its worker) POSTs each invocation there instead of using a host connection.
// Run: npm run example -- http-tool   (starts a Brain and a worker for you unless BRAIN_URL and
// BRAIN_TOKEN are set; a Brain you run yourself needs a worker too, as `npm start` has).
import { createServer } from "node:http";
import { Brain, hostEnv, tool, toolHandler } from "@aexhq/brain";
import { z } from "zod";

// "This example assumes your app provides database.get(key), returning { value: string } or null."
const records = new Map([["customer:42", { value: "Ada Lovelace" }]]);
const database = { get: async (key) => records.get(key) ?? null };

// The seed's declaration, without its ctx.emit: an HTTP tool gets no arbitrary events (ctx.emit
// rejects with not_available_in_http_tool), only results and finish.
export const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => {
    return ctx.finish((await database.get(`${ctx.options.prefix}${id}`)) ?? null);
  },
});

// The application's server: the tool placed with its options, as the handler runs it.
const server = createServer(toolHandler([lookup({ prefix: "customer:" })]));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/tools`;

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "done" }],
    },
    tools: [lookup({ env: hostEnv({ name: "web", url }), prefix: "customer:" })],
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
  server.closeAllConnections();
  server.close();
}
