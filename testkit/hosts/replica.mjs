// An application process serving the named host NAMED_HOST (brain.hosts.serve) with `lookup`,
// for tests that run several replicas, kill one, or start one late. Prints "SERVING <hostId>"
// once Brain accepted it (or "REFUSED <code>" and exits 2), "RUNNING <seq>" when a call enters
// and "ABORTED <seq>" when its signal fires. SCHEMA=v2 declares a different input schema.
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";

const replica = process.env.REPLICA ?? "replica";
const input =
  process.env.SCHEMA === "v2"
    ? z.object({ id: z.string(), hold: z.boolean().optional(), verbose: z.boolean() })
    : z.object({ id: z.string(), hold: z.boolean().optional() });

const lookup = tool({
  name: "lookup",
  description: "Looks up one record; with hold, runs until its signal fires.",
  input,
  output: z.object({ value: z.string(), replica: z.string() }),
  options: z.object({ prefix: z.string() }),
  run: async ({ id, hold }, ctx) => {
    console.log(`RUNNING ${ctx.sequence}`);
    if (hold) {
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      console.log(`ABORTED ${ctx.sequence}`);
      return;
    }
    return ctx.finish({ value: `${ctx.options.prefix}${id}`, replica });
  },
});

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const served = await brain.hosts.serve({
    name: process.env.NAMED_HOST ?? "app",
    tools: [lookup({ prefix: `${replica}:` })],
  });
  console.log(`SERVING ${served.hostId}`);
} catch (err) {
  console.log(`REFUSED ${err.code} ${err.message}`);
  process.exit(2);
}
process.on("SIGTERM", () => brain.close().then(() => process.exit(0)));
