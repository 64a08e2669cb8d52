import type { ScriptStep } from "@aexhq/brain-contracts";
import type { ModelCallContext, ModelProvider, ModelRequest, ModelResponse } from "./provider.js";

/**
 * A deterministic model for tests, examples and benchmarks: call N answers with step N of the
 * script. The position comes from the journal (the count of model calls), so a restarted server
 * continues the script where the session left it. An exhausted script answers with empty text.
 */
export class ScriptedProvider implements ModelProvider {
  readonly name = "scripted";

  constructor(private readonly script: readonly ScriptStep[]) {}

  async complete(_request: ModelRequest, context: ModelCallContext): Promise<ModelResponse> {
    const step = this.script[context.index];
    const usage = { inputTokens: 0, outputTokens: 0 };
    if (!step) return { text: "", toolCalls: [], usage };
    if ("toolCalls" in step) {
      return {
        text: step.text ?? "",
        toolCalls: step.toolCalls.map((c, i) => ({ id: `call_${context.index}_${i}`, name: c.name, input: c.input })),
        usage,
      };
    }
    return { text: step.text, toolCalls: [], usage };
  }
}
