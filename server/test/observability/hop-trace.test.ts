// The hops of a tool call's path (contracts/src/hop-trace.ts), as `npm run bench -- --trace-hops`
// reads them: published on one diagnostics channel, in the order the call meets them. A real
// Brain and the public SDK in this process, so both sides publish to the same subscriber.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { tool } from "@aexhq/brain";
import { HOP_CHANNEL, HOPS } from "@aexhq/brain-contracts";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { callsThenDone, serverAndClient } from "../../../testkit/tool-harness.js";

const { client: brain } = serverAndClient();

const seen: string[] = [];
const listener = (message: unknown) => seen.push(message as string);
afterEach(() => {
  unsubscribe(HOP_CHANNEL, listener);
});

/** Whether `wanted` occurs in `all` in order, other hops allowed between. */
function inOrder(all: string[], wanted: readonly string[]): boolean {
  let i = 0;
  for (const hop of all) if (hop === wanted[i]) i++;
  return i === wanted.length;
}

describe("hops of a tool call", () => {
  it("are published in the order the call meets them, from the intent's commit to the result's", async () => {
    const echo = tool({
      name: "echo",
      description: "Answers with its input.",
      input: z.object({ text: z.string() }),
      run: async ({ text }) => ({ text }),
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "echo", input: { text: "hi" } }),
      tools: [echo()],
    });
    subscribe(HOP_CHANNEL, listener);
    await expect(session.send("go")).resolves.toBe("done");

    // Every hop there is, each where the call meets it: the intent's commit, the invoke over the
    // socket, the SDK's execution, the result back over the socket and its commit.
    expect(inOrder(seen, HOPS)).toBe(true);
    expect(inOrder(seen, ["server.report-submitted", "writer.batch-sent", "writer.batch-committed"])).toBe(true);
  });
});
