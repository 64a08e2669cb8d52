// A host application in its own process, for tests that stop it (SIGSTOP) or kill it.
// Prints "SESSION <id>" once its session exists and "RUNNING <seq>" when its tool is entered.
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";

const slow = tool({
  name: "slow",
  description: "Runs until cancelled.",
  input: z.object({}),
  run: async (_input, ctx) => {
    console.log(`RUNNING ${ctx.sequence}`);
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    console.log(`ABORTED ${ctx.sequence}`);
  },
});

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
const session = await brain.sessions.create({
  model: { provider: "scripted", script: [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "lost it" }] },
  tools: [slow()],
});
console.log(`SESSION ${session.id}`);
console.log(`CREDENTIALS ${JSON.stringify(brain.credentials())}`);
process.on("SIGTERM", () => brain.close().then(() => process.exit(0)));
