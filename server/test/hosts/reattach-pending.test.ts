// Restoring a host accepts future commands: reattaching some of its sessions after a restart must
// not hand the others' pending calls to a client that has no handlers for them (which could only
// answer unknown_tool). They wait, pending, until their own session is reattached.

import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { postMessage } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { scripted } from "../../../testkit/turns.js";
import { serverTicks, until } from "../../../testkit/wait.js";

let brain: InProcessBrain;
beforeAll(async () => {
  brain = await startBrain();
});
afterAll(async () => {
  await brain?.close();
});

const runs: string[] = [];
const lookup = tool({
  name: "lookup",
  description: "Looks up one record.",
  input: z.object({ id: z.string() }),
  run: ({ id }, ctx) => {
    runs.push(id);
    return ctx.finish({ id });
  },
});

async function call(sessionId: string) {
  const [row] = await brain.db.sql<{ status: string; outcome: unknown }[]>`
    SELECT status, outcome FROM tool_calls WHERE session_id = ${sessionId}`;
  return row;
}

describe("reattaching one session of a host", () => {
  it("leaves the other sessions' pending calls pending until they are reattached, then serves them", async () => {
    const before = new Brain({ url: brain.url, token: brain.token });
    const model = (id: string) => scripted({ toolCalls: [{ name: "lookup", input: { id } }] }, { text: `done ${id}` });
    const first = await before.sessions.create({ model: model("1"), tools: [lookup()] });
    const second = await before.sessions.create({ model: model("2"), tools: [lookup()] });
    const credentials = before.credentials()!;
    await before.close(); // the application restarts

    await postMessage(brain, first.id, "go");
    await postMessage(brain, second.id, "go");
    await until("both calls pending", async () => (await call(first.id))?.status === "pending");
    await until("both calls pending", async () => (await call(second.id))?.status === "pending");

    const after = new Brain({ url: brain.url, token: brain.token, credentials });
    try {
      await after.sessions.get(first.id, { tools: [lookup()] });
      await until("the reattached session's call served", async () => (await call(first.id))?.status === "ended");
      expect((await call(first.id))?.outcome).toEqual({ status: "ok", value: { id: "1" } });

      // The other session's call is not sent to a client without its handlers: it stays pending.
      await serverTicks(brain.db.sql, brain.app.brain.serverId, 2);
      expect(await call(second.id)).toEqual({ status: "pending", outcome: null });

      await after.sessions.get(second.id, { tools: [lookup()] });
      await until("the second call served", async () => (await call(second.id))?.status === "ended");
      expect((await call(second.id))?.outcome).toEqual({ status: "ok", value: { id: "2" } });
      expect(runs).toEqual(["1", "2"]);
    } finally {
      await after.close();
    }
  });
});
