import type { Scenario } from "./context.js";
import { skipped } from "./stats.js";

/** Cold and warm end-to-end latency of a component tool: components do not exist yet. */
export const componentCall: Scenario = {
  name: "component_call",
  run: async () => ({
    figures: [skipped("component_call", "not yet implemented (components are a later issue)")],
  }),
};
