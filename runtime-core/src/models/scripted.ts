import type { ScriptStep } from "@aexhq/brain-contracts";
import type { ModelCallContext, ModelProvider, ProviderRequest, ProviderResponse } from "./types.js";

/**
 * A deterministic model for tests, examples and benchmarks: Agentloop call N answers with step N
 * of `script`, and a tool's model call N with step N of `toolScript`. Positions come from the
 * journal (counts of model calls), so a restarted server continues where the session left off. An
 * exhausted script answers with empty text.
 */
export class ScriptedProvider implements ModelProvider {
  readonly name = "scripted";

  constructor(
    private readonly script: readonly ScriptStep[],
    private readonly toolScript: readonly ScriptStep[],
  ) {}

  async complete(_request: ProviderRequest, context: ModelCallContext): Promise<ProviderResponse> {
    const step = (context.origin === "tool" ? this.toolScript : this.script)[context.index];
    const base = { usage: { inputTokens: 0, outputTokens: 0 }, model: "scripted" };
    if (!step) return { ...base, text: "", toolCalls: [], stopReason: "end" };
    if ("toolCalls" in step) {
      return {
        ...base,
        text: step.text ?? "",
        toolCalls: step.toolCalls.map((c, i) => ({ id: `call_${context.index}_${i}`, name: c.name, input: c.input })),
        stopReason: "tool_calls",
      };
    }
    return { ...base, text: step.text, toolCalls: [], stopReason: "end" };
  }
}
