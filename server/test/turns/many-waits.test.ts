// Every request that waits on a journal (a send's bounded wait, an answer to a call) listens for
// the server's shutdown, and hundreds of them at once are a normal day. Node warns of a "possible
// EventTarget memory leak" past ten listeners on one signal: in an operator's log that would be a
// false alarm about a leak that is not there. A real Brain, the public SDK, 16 turns at once.
import { tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callsThenDone, deferred, serverAndClient, until } from "../../../testkit/tool-harness.js";

const { client } = serverAndClient();

describe("many requests waiting at once", () => {
  it("raise no listener-leak warning, and every one of them is answered", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    const release = deferred<void>();
    let running = 0;
    const hold = tool({
      name: "hold",
      description: "Runs until the test lets it finish.",
      input: z.object({}),
      run: async () => {
        running++;
        await release.promise;
      },
    });
    try {
      const sessions = await Promise.all(
        Array.from({ length: 16 }, () =>
          client.sessions.create({ model: callsThenDone({ name: "hold", input: {} }), tools: [hold()] }),
        ),
      );
      // Each send's request waits on the server until its turn ends.
      const turns = sessions.map((s) => s.send("go"));
      await until("16 tools running", () => running === 16);
      release.resolve();
      expect(await Promise.all(turns)).toEqual(Array(16).fill("done"));
      // Node emits its warnings on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});
