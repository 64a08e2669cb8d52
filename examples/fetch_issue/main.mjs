// The seed's fetch_issue tool: a descriptor its HTTP Environment interprets. Brain's worker turns
// `{ type: "http_json", method: "GET", path }` into a request to the Environment's base URL, with
// the Environment's headers (encrypted at rest, never journaled), and the JSON answer is the result.
// To run offline, this example starts a tiny local stand-in for the GitHub API.
// Run: npm run example -- fetch_issue   (starts a Brain, with its worker, unless BRAIN_URL and
// BRAIN_TOKEN are set; then a worker must be running against that Brain's database: npm run worker)
import { createServer } from "node:http";
import { Brain, httpEnv, tool } from "@aexhq/brain";
import { z } from "zod";

const TOKEN = "example-token-not-a-real-one";

// "GitHub": one issue, for callers that present the token.
const fakeGitHub = createServer((req, res) => {
  res.setHeader("content-type", "application/json");
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    res.statusCode = 401;
    res.end(JSON.stringify({ message: "Requires authentication" }));
    return;
  }
  const m = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(req.url ?? "");
  if (!m) {
    res.statusCode = 404;
    res.end(JSON.stringify({ message: "Not Found" }));
    return;
  }
  res.end(
    JSON.stringify({ number: Number(m[2]), title: "Durable tools on Postgres", state: "open", repository: m[1] }),
  );
});
await new Promise((resolve) => fakeGitHub.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${fakeGitHub.address().port}`;

const fetchIssue = tool({
  name: "fetch_issue",
  description: "Fetch one issue.",
  input: z.object({ number: z.number().int() }),
  options: z.object({ repository: z.string() }),
  implementation: ({ repository }) => ({
    type: "http_json",
    method: "GET",
    path: `/repos/${repository}/issues/{number}`,
  }),
});

// Every tool bound to this Environment uses its base URL and headers: the binding's authority.
const github = httpEnv({ name: "github", baseUrl, headers: { authorization: `Bearer ${TOKEN}` } });

const placed = fetchIssue({ env: github, repository: "aexhq/brain" });

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [{ toolCalls: [{ name: "fetch_issue", input: { number: 1 } }] }, { text: "done" }],
    },
    tools: [placed],
  });
  console.log(await session.send("what is issue 1 about?"));
  for await (const e of session.events({ after: 0, follow: false })) {
    console.log(e.sequence, e.kind, JSON.stringify(e.payload));
  }
  console.log(
    `\nThe same journal in SQL:\n  SELECT seq, kind, payload FROM brain.journal WHERE session_id = '${session.id}' ORDER BY seq;`,
  );
} finally {
  await brain.close();
  fakeGitHub.close();
}
