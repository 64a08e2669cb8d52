// The HTTP Environment driver in a worker, driven through the database as a server drives it: the
// setup claim survives the death of whoever held it, and a stopped call records nothing.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { environmentSecret, secretAad } from "@aexhq/brain-db/ops";
import { SecretBox } from "@aexhq/brain-db/secrets";
import postgres from "postgres";
import { expect, it } from "vitest";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
import { until } from "../../testkit/wait.js";
import { callComponent, createPlacedSession, harnessForTests, waitForEnd, workerForTests } from "./support.js";

const api = startedBeforeAll(startApi);
const h = harnessForTests();
workerForTests(h);

/** The Environment's API: counts setup requests and keeps the others with their authorization. */
async function startApi(): Promise<{ url: string; setups: number; issues: string[]; close(): Promise<void> }> {
  const state = { setups: 0, issues: [] as string[] };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/setup") state.setups++;
      else state.issues.push(`${req.url} ${req.headers.authorization}`);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ url: req.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get setups() {
      return state.setups;
    },
    issues: state.issues,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A session with one HTTP Environment ("github", with a setup request) and one descriptor tool. */
async function createHttpSession(): Promise<string> {
  const id = randomUUID();
  const box = new SecretBox(Buffer.from(TEST_SECRET_KEY, "hex"));
  const secret = environmentSecret("github");
  const placement = {
    name: "issue",
    description: "Fetch one issue.",
    inputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
    outputSchema: null,
    env: { type: "http", name: "github" },
    implementation: { type: "descriptor", descriptor: { type: "http_json", method: "GET", path: "/issues/{number}" } },
  };
  await createPlacedSession(h, [placement], {
    id,
    secrets: [
      {
        name: secret,
        sealed: box.seal(JSON.stringify({ authorization: "Bearer t0ken-1234" }), secretAad(id, secret)),
      },
    ],
    environments: [
      {
        name: "github",
        type: "http",
        config: { baseUrl: api.url, headerNames: ["authorization"], setup: { method: "POST", path: "/setup" } },
      },
    ],
  });
  return id;
}

it("a setup whose holder died is run by the next caller: the Environment is never wedged", async () => {
  const sessionId = await createHttpSession();
  // Someone took the setup claim (the worker's own lock, exactly) and then died mid-setup.
  const other = postgres(h.db.url, { max: 1, onnotice: () => {} });
  try {
    const [holder] = await other<{ pid: number }[]>`
      SELECT pg_backend_pid() AS pid,
             pg_advisory_lock(hashtext('brain:environment-setup'), hashtext(${`${sessionId}/github`}))`;
    const seq = await callComponent(h, sessionId, { tool: "issue", input: { number: 7 } });
    await until("the call claimed", async () => {
      const [row] = await h.db.sql`SELECT state FROM calls WHERE session_id = ${sessionId} AND seq = ${seq}`;
      return row?.state === "running";
    });
    // While the claim is held nobody else sets the Environment up.
    expect(api.setups).toBe(0);
    await h.db.sql`SELECT pg_terminate_backend(${holder!.pid})`;
    const ended = await waitForEnd(h.db.sql, sessionId, seq);
    expect(ended.outcome).toEqual({ status: "ok", value: { url: "/issues/7" } });
    expect(api.setups).toBe(1);
    expect(api.issues).toEqual(["/issues/7 Bearer t0ken-1234"]);
    const [env] = await h.db.sql`SELECT status FROM environments WHERE session_id = ${sessionId}`;
    expect(env!.status).toBe("ready");
  } finally {
    await other.end({ timeout: 1 }).catch(() => {});
  }
});

it("a call stopped while it waits for the setup records only its deadline, and leaves the Environment new", async () => {
  const sessionId = await createHttpSession();
  const other = postgres(h.db.url, { max: 1, onnotice: () => {} });
  try {
    await other`SELECT pg_advisory_lock(hashtext('brain:environment-setup'), hashtext(${`${sessionId}/github`}))`;
    const setupsBefore = api.setups;
    const seq = await callComponent(h, sessionId, { tool: "issue", input: { number: 8 }, deadline: Date.now() + 1500 });
    const ended = await waitForEnd(h.db.sql, sessionId, seq);
    expect(ended.outcome).toMatchObject({ status: "timeout", cause: "deadline" });
    const [env] = await h.db.sql`SELECT status FROM environments WHERE session_id = ${sessionId}`;
    expect(env!.status).toBe("new");
    expect(api.setups).toBe(setupsBefore);
  } finally {
    await other.end({ timeout: 1 }).catch(() => {});
  }
});
