// Every outcome rule of the Tool API, runnable: one tool per rule (tools.mjs), all called by the
// model in one turn, then a background result after the turn and a cancelled call. It prints each
// call's results and terminal outcome, then the journal.
// Run: npm run example -- outcomes
//
// `unknown` is the one outcome not shown: Brain records it when it cannot know what happened
// (the host's connection was lost with the call open, its server or worker died); the tool's
// ctx.signal aborts with status "unknown" if the host is still running.
import { Brain } from "@aexhq/brain";
import * as tools from "./tools.mjs";

const declared = [
  tools.ordinary,
  tools.explicitOk,
  tools.errorOutcome,
  tools.throws,
  tools.malformed,
  tools.nonJson,
  tools.slow,
  tools.background,
  tools.lingering,
];

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [
        { toolCalls: declared.map((t) => ({ name: t.name, input: {} })) },
        { text: "done" },
        { text: "saw the background result" },
        { text: "saw the cancellation" },
      ],
    },
    tools: declared.map((t) => t()),
  });
  console.log(await session.send("show every outcome"));

  // Later results and Brain-recorded interruptions of background calls wake the session: each
  // starts an activation (cause "observations") that shows them to the model.
  const activationEnded = async (count) => {
    let seen = 0;
    for await (const e of session.events({ after: 0, follow: true })) {
      if (e.kind === "activation_ended" && ++seen === count) return;
    }
  };
  tools.release.background();
  await activationEnded(2);
  await session.cancelCall(tools.calls.lingering);
  await activationEnded(3);
  // Ending the session cancels what is still open: `ordinary` returned but never finished.
  await session.end();

  const names = new Map();
  const journal = [];
  for await (const e of session.events({ after: 0, follow: false })) {
    journal.push(`${e.sequence} ${e.kind} ${JSON.stringify(e.payload)}`);
    if (e.kind === "tool_call_started") names.set(e.sequence, e.payload.tool);
    if (e.kind === "tool_result" || e.kind === "tool_call_ended") {
      const what = e.kind === "tool_result" ? "result" : "ended ";
      console.log(`${names.get(e.payload.call)} ${what} ${JSON.stringify(e.payload.outcome)}`);
    }
  }
  console.log(`\n${journal.join("\n")}`);
  console.log(
    `\nThe same journal in SQL:\n  SELECT seq, kind, payload FROM brain.journal WHERE session_id = '${session.id}' ORDER BY seq;`,
  );
} finally {
  await brain.close();
}
