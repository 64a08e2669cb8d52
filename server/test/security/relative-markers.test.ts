// The Agentloop's appends name other records of the same append by position (an activation's
// message, a model call's activation), resolved to sequences when written. Data from outside — a
// model's tool input, an MCP client's — is never read as such a reference, whatever its shape:
// the journal and the handler see the input exactly as it was given.
import { Brain, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";

const server = startedBeforeAll(() => startBrain());

const seen: unknown[] = [];
const echo = tool({
  name: "echo",
  description: "Finishes with its input.",
  input: z.object({ $rel: z.number() }).passthrough(),
  run: async (input, ctx) => {
    seen.push(input);
    return ctx.finish(input);
  },
});

describe("input shaped like the journal's own relative reference", () => {
  it("is journaled, dispatched and returned as the model gave it", async () => {
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const input = { $rel: -1, note: "not a reference" };
      const session = await client.sessions.create({
        model: { provider: "scripted", script: [{ toolCalls: [{ name: "echo", input }] }, { text: "done" }] },
        tools: [echo()],
      });
      expect(await session.send("go")).toBe("done");
      expect(seen).toEqual([input]);

      const rows = await server.db.sql<{ kind: string; payload: Record<string, unknown> }[]>`
        SELECT kind, payload FROM records WHERE session_id = ${session.id} ORDER BY seq`;
      const started = rows.find((r) => r.kind === "tool_call_started")!;
      expect(started.payload.input).toEqual(input);
      const ended = rows.find((r) => r.kind === "tool_call_ended")!;
      expect(ended.payload.outcome).toEqual({ status: "ok", value: input });
      // The Agentloop's own references still resolve: the activation names its message.
      const message = rows.findIndex((r) => r.kind === "user_message") + 1;
      const activation = rows.find((r) => r.kind === "activation_started")!;
      expect(activation.payload.message).toBe(message);
    } finally {
      await client.close();
    }
  });
});
