import type { ScriptStep } from "@aexhq/brain";

/** A scripted model: step N answers model call N; a string is a step that answers that text. */
export function scripted(...steps: (ScriptStep | string)[]) {
  return {
    provider: "scripted" as const,
    script: steps.map((step): ScriptStep => (typeof step === "string" ? { text: step } : step)),
  };
}
