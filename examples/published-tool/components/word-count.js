// The word_count tool as a component (brain-tools build makes components/word-count.wasm of it,
// against @aexhq/brain/contracts/tool.wit). Input { text }; finishes with { words }.
import { finish } from "brain:tool/host@0.2.0";

export function run(invocation) {
  const { text } = JSON.parse(invocation.input);
  const words = String(text).split(/\s+/).filter(Boolean).length;
  finish(JSON.stringify({ status: "ok", value: { words } }));
}
