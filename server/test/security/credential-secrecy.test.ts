// Credentials given at session creation (a provider API key, an HTTP Environment's headers) are
// used, but encrypted at rest and never journaled, logged or returned. The test runs real
// processes at the most verbose log level, uses the credentials for real (fake providers and a
// fake HTTP API check them), then dumps every table of Brain's schemas and every log line and
// looks for them.
import { randomBytes } from "node:crypto";
import { Brain, type BrainError, httpEnv, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { spawnBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startFakeBedrock } from "../../../testkit/fake-ai-providers.js";
import { startFakeAnthropic, startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { startJsonServer } from "../../../testkit/json-server.js";
import { TEST_SECRET_KEY } from "../../../testkit/secrets.js";
import { journalOf } from "../../../testkit/tool-harness.js";
import { fetchIssue } from "../environments/environments-support.js";

const OPENAI_KEY = `sk-openai-${randomBytes(12).toString("hex")}`;
const ANTHROPIC_KEY = `sk-ant-${randomBytes(12).toString("hex")}`;
const WRONG_KEY = `sk-wrong-${randomBytes(12).toString("hex")}`;
const HEADER_SECRET = `ghp_${randomBytes(12).toString("hex")}`;
// Bedrock's key pair, signed with SigV4 (the id is sealed too, though AWS does not count it secret).
const AWS_KEY_ID = `AKIA${randomBytes(8).toString("hex").toUpperCase()}`;
const AWS_SECRET = randomBytes(20).toString("base64url");
const AWS_SESSION_TOKEN = `session-${randomBytes(16).toString("hex")}`;
const SECRETS = [
  OPENAI_KEY,
  ANTHROPIC_KEY,
  WRONG_KEY,
  HEADER_SECRET,
  TEST_SECRET_KEY,
  AWS_KEY_ID,
  AWS_SECRET,
  AWS_SESSION_TOKEN,
];

const openai = startedBeforeAll(() => startFakeOpenAI({ apiKey: OPENAI_KEY }));
const anthropic = startedBeforeAll(() => startFakeAnthropic({ apiKey: ANTHROPIC_KEY }));
const bedrock = startedBeforeAll(() => startFakeBedrock({ apiKey: AWS_KEY_ID }));
const api = startedBeforeAll(() =>
  startJsonServer((req) =>
    req.headers.authorization === `Bearer ${HEADER_SECRET}`
      ? { status: 200, body: { title: `issue ${req.path.split("/").at(-1)}` } }
      : { status: 401, body: { message: `bad credentials: ${req.headers.authorization}` } },
  ),
);
// The server and the worker log everything they would ever log.
const stack = startedBeforeAll(() => spawnBrainWithWorker({ env: { BRAIN_LOG_LEVEL: "trace" } }));

const summarize = tool({
  name: "summarize",
  description: "Asks the model for a summary.",
  input: z.object({ text: z.string() }),
  run: async ({ text }, ctx) => {
    const r = await ctx.model({ messages: [{ role: "user", content: `Summarise: ${text}` }] });
    return ctx.finish({ summary: r.text });
  },
});

describe("credential secrecy", () => {
  it("uses the keys and headers, and no table, log line or API answer contains them", async () => {
    const brain = new Brain({ url: stack.url, token: stack.token });
    try {
      const github = httpEnv({
        name: "github",
        baseUrl: api.url,
        headers: { authorization: `Bearer ${HEADER_SECRET}` },
      });
      openai.reply(
        {
          toolCalls: [
            { name: "summarize", input: { text: "long" } },
            { name: "fetch_issue", input: { number: 7 } },
          ],
        },
        { text: "short" },
        { text: "done" },
      );
      const a = await brain.sessions.create({
        model: { provider: "openai", name: "gpt-test", apiKey: OPENAI_KEY, baseUrl: openai.url },
        tools: [summarize(), fetchIssue({ env: github, repository: "aexhq/brain" })],
      });
      expect(await a.send("go")).toBe("done");
      anthropic.reply(
        { toolCalls: [{ name: "summarize", input: { text: "long" } }] },
        { text: "brief" },
        { text: "fine" },
      );
      const b = await brain.sessions.create({
        model: { provider: "anthropic", name: "claude-test", apiKey: ANTHROPIC_KEY, baseUrl: anthropic.url },
        tools: [summarize()],
      });
      expect(await b.send("go")).toBe("fine");
      bedrock.reply({ toolCalls: [{ name: "summarize", input: { text: "long" } }] }, { text: "terse" }, { text: "ok" });
      const d = await brain.sessions.create({
        model: {
          provider: "bedrock",
          name: "anthropic.claude-test-v1:0",
          region: "eu-west-1",
          accessKeyId: AWS_KEY_ID,
          secretAccessKey: AWS_SECRET,
          sessionToken: AWS_SESSION_TOKEN,
          baseUrl: bedrock.url,
        },
        tools: [summarize()],
      });
      expect(await d.send("go")).toBe("ok");
      // A rejected key: the fake quotes it back in its error body, as careless servers do.
      const c = await brain.sessions.create({
        model: { provider: "openai", name: "gpt-test", apiKey: WRONG_KEY, baseUrl: openai.url },
      });
      // The failed turn rejects with the provider's code; its message is searched for keys below.
      const refused = await c.send("go").then(
        () => null,
        (error: unknown) => error as BrainError,
      );
      expect(refused).toMatchObject({ name: "BrainError", code: "model_auth_failed" });

      // The credentials were really used.
      expect(openai.requests.some((r) => r.headers.authorization === `Bearer ${OPENAI_KEY}`)).toBe(true);
      expect(openai.requests.some((r) => r.headers.authorization === `Bearer ${WRONG_KEY}`)).toBe(true);
      expect(anthropic.requests.some((r) => r.headers["x-api-key"] === ANTHROPIC_KEY)).toBe(true);
      expect(bedrock.requests.length).toBe(3);
      for (const r of bedrock.requests) {
        expect(r.headers.authorization).toMatch(
          new RegExp(`^AWS4-HMAC-SHA256 Credential=${AWS_KEY_ID}/\\d{8}/eu-west-1/bedrock/`),
        );
        expect(r.headers["x-amz-security-token"]).toBe(AWS_SESSION_TOKEN);
      }
      expect(api.requests.some((r) => r.headers.authorization === `Bearer ${HEADER_SECRET}`)).toBe(true);
      const journalA = await journalOf(stack.db.sql, a.id);
      expect(journalA.find((r) => r.kind === "tool_call_ended" && r.payload.outcome)?.payload).toBeDefined();
      const failed = (await journalOf(stack.db.sql, c.id)).find((r) => r.kind === "model_call_ended");
      expect(failed?.payload.outcome).toMatchObject({ status: "error", error: { code: "model_auth_failed" } });

      // Every row of every table in Brain's schemas, as text.
      const tables = await stack.db.sql<{ schema: string; name: string }[]>`
        SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_schema IN ('brain', 'brain_boss') AND table_type = 'BASE TABLE'`;
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["records", "sessions", "session_secrets"]));
      let dump = "";
      for (const t of tables) {
        const rows = await stack.db.sql.unsafe(`SELECT t::text AS row FROM "${t.schema}"."${t.name}" t`);
        dump += rows.map((r) => r.row).join("\n");
      }
      const sealed = await stack.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.session_secrets`;
      expect(sealed[0]?.n).toBe(5);

      // What the API hands out.
      const answers: string[] = [JSON.stringify({ message: refused?.message, details: refused?.details })];
      for (const s of [a, b, c, d]) {
        for (const path of [`/v1/sessions/${s.id}`, `/v1/sessions/${s.id}/tools`, `/v1/sessions/${s.id}/events`]) {
          const res = await fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${stack.token}` } });
          answers.push(await res.text());
        }
      }
      const logs = stack.server.output() + stack.worker.output();
      expect(logs.length).toBeGreaterThan(1000);
      for (const secret of SECRETS) {
        const forms = [secret, Buffer.from(secret).toString("base64"), Buffer.from(secret).toString("hex")];
        for (const form of forms) {
          expect(dump.includes(form), `the database holds ${secret.slice(0, 8)}…`).toBe(false);
          expect(logs.includes(form), `the logs hold ${secret.slice(0, 8)}…`).toBe(false);
          expect(answers.join("\n").includes(form), `the API returned ${secret.slice(0, 8)}…`).toBe(false);
        }
      }
    } finally {
      await brain.close();
    }
  }, 60_000);
});
