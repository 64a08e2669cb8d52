// The scripted model's answers, generated from the seed. A turn is one or two steps of tool calls
// and then a text. Background results start extra activations that consume steps too, so turns
// drift over the script; that is fine, every step is used at most once. Each tool call's input `n`
// is unique in the run, so an HTTP request the target receives names its call.
import type { ScriptStep } from "@aexhq/brain-contracts";
import type { TOOL_NAMES } from "./host-tools.js";
import type { Rng } from "./rng.js";

const WEIGHTS: Record<(typeof TOOL_NAMES)[number], number> = { quick: 3, slow: 2, background: 2, stall: 1, fetch: 2 };

export function sessionScript(rng: Rng, sessionIndex: number, steps: number): ScriptStep[] {
  const script: ScriptStep[] = [];
  let turn = 0;
  while (script.length < steps) {
    turn++;
    const toolSteps = rng.int(1, 2);
    for (let s = 0; s < toolSteps; s++) {
      const toolCalls = Array.from({ length: rng.int(1, 3) }, (_, i) => ({
        name: rng.weighted(WEIGHTS),
        input: { n: sessionIndex * 1_000_000 + script.length * 10 + i },
      }));
      script.push({ toolCalls });
    }
    script.push({ text: `turn ${turn} done` });
  }
  return script;
}
