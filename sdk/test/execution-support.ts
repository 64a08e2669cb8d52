import { z } from "zod";
import type { ToolContext } from "../src/context.js";
import { Execution } from "../src/execution.js";
import { runtimeOf, type ToolDefinition, tool } from "../src/tool.js";
import { RecordingChannel, SESSION_ID } from "./recording-channel.js";

// One tool execution over a recording channel, shared by the execution suites.

export type Run = (input: unknown, ctx: ToolContext) => unknown;

export function start(
  run: Run,
  more: Partial<ToolDefinition<z.ZodType, z.ZodType | undefined, undefined>> = {},
  call: { deadline?: number | null; manualAcks?: boolean; input?: unknown; approved?: boolean } = {},
) {
  const declared = tool({
    name: "t",
    description: "",
    input: z.object({ id: z.string() }),
    ...more,
    run: run as never,
  });
  const channel = new RecordingChannel(call.manualAcks ?? false);
  let ended = 0;
  const execution = new Execution(
    channel,
    { sessionId: SESSION_ID, sequence: 7, deadline: call.deadline ?? null },
    runtimeOf(declared()),
    () => ended++,
  );
  const started = execution.start(call.input ?? { id: "a" }, call.approved ?? false);
  return { channel, execution, started, endedCount: () => ended };
}
