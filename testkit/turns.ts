import { type Brain, type ScriptStep, type ToolContext, tool } from "@aexhq/brain";
import { expect } from "vitest";
import { z } from "zod";

/** A scripted model: step N answers model call N; a string is a step that answers that text. */
export function scripted(...steps: (ScriptStep | string)[]) {
  return {
    provider: "scripted" as const,
    script: steps.map((step): ScriptStep => (typeof step === "string" ? { text: step } : step)),
  };
}

/**
 * A session whose one tool (`bg`) returns at once and keeps its context for background results:
 * its first turn has run ("waiting") when this resolves; `script` answers the model calls after.
 */
export async function backgroundSession(client: Brain, script: (ScriptStep | string)[]) {
  let captured: ToolContext | undefined;
  const bg = tool({
    name: "bg",
    description: "Returns at once; results come later.",
    input: z.object({}),
    run: async (_input, ctx) => {
      captured = ctx as ToolContext;
    },
  });
  const session = await client.sessions.create({
    model: scripted({ toolCalls: [{ name: "bg", input: {} }] }, "waiting", ...script),
    tools: [bg()],
  });
  expect(await session.send("go")).toBe("waiting");
  return { session, ctx: () => captured! };
}
