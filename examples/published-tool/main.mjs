// Uses the published tools as an application does: imported from the package by its name. Run it
// here (Node resolves the package's own name) or after `npm install <tarball>` elsewhere.
// Run: npx brain-tools build (once), then npm run example -- published-tool
import { existsSync } from "node:fs";
import { Brain, brainEnv } from "@aexhq/brain";
import { greet, wordCount } from "@aexhq/brain-example-tools";

// The factory carries its executable reference: the component the package ships (or will, once built).
if (!existsSync(wordCount.component.url)) {
  console.error(
    `${wordCount.component.url.pathname} is not built: run npx brain-tools build in examples/published-tool`,
  );
  process.exit(1);
}

// Where the tools came from: this package's folder, or the node_modules it was installed into.
console.error(`tools from ${import.meta.resolve("@aexhq/brain-example-tools")}`);

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [
        {
          toolCalls: [
            { name: "word_count", input: { text: "the quick brown fox" } },
            { name: "greet", input: { name: "Ada" } },
          ],
        },
        { text: "done" },
      ],
    },
    tools: [wordCount({ env: brainEnv({ name: "wasm" }) }), greet({ greeting: "Welcome" })],
  });
  console.log(await session.send("count and greet"));
  for await (const e of session.events({ after: 0, follow: false })) {
    console.log(e.sequence, e.kind, JSON.stringify(e.payload));
  }
  console.log(
    `\nThe same journal in SQL:\n  SELECT seq, kind, payload FROM brain.journal WHERE session_id = '${session.id}' ORDER BY seq;`,
  );
} finally {
  await brain.close();
}
