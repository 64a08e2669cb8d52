// A package of tool declarations, as an application installs it: each export is a tool factory the
// application places in its sessions. The component tool carries its executable reference, a URL
// relative to this module, so it resolves inside node_modules wherever the package is installed.
import { component, tool } from "@aexhq/brain";
import { z } from "zod";

/** Counts the words of a text, in a WebAssembly component (components/word-count.js) run by Brain's worker. */
export const wordCount = tool({
  name: "word_count",
  description: "Count the words of a text.",
  input: z.object({ text: z.string() }),
  output: z.object({ words: z.number().int() }),
  implementation: component(new URL("./components/word-count.wasm", import.meta.url)),
});

/** Greets someone, in the application that places it (a run tool). */
export const greet = tool({
  name: "greet",
  description: "Greet someone by name.",
  input: z.object({ name: z.string() }),
  output: z.object({ text: z.string() }),
  options: z.object({ greeting: z.string().default("Hello") }),
  run: ({ name }, ctx) => ctx.finish({ text: `${ctx.options.greeting}, ${name}!` }),
});
