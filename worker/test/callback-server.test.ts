// An HTTP tool's invocation names a live server for the application's callbacks. After a database
// outage every server's heartbeat is stale until it beats again: a worker back first waits for a
// server to beat rather than failing the calls it claims meanwhile; with none up for the whole
// wait, the call ends setup_failed.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { registerServer, stopServer } from "@aexhq/brain-db/ops";
import { expect, it } from "vitest";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { until } from "../../testkit/wait.js";
import { callComponent, callRow, createPlacedSession, harnessForTests, waitForEnd, workerForTests } from "./support.js";

/** The application: keeps each invocation's callback URL and answers without finishing the call. */
async function startApp(): Promise<{ url: string; callbacks: string[]; close(): Promise<void> }> {
  const callbacks: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      callbacks.push((JSON.parse(body) as { callback: { url: string } }).callback.url);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tools`,
    callbacks,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const app = startedBeforeAll(startApp);
const h = harnessForTests();
workerForTests(h);

/** A session whose one tool ("app") the application serves over HTTP. */
function httpToolSession(): Promise<string> {
  return createPlacedSession(h, [
    {
      name: "app",
      description: "Served by the application over HTTP.",
      inputSchema: { type: "object" },
      outputSchema: null,
      env: { type: "host", name: "application", url: app.url },
    },
  ]);
}

it("waits for a server to beat again, then gives the application that server's URL", async () => {
  // A server that announced its URL and has not beaten since the database came back.
  const server = randomUUID();
  await registerServer(h.db.sql, server);
  await h.db.sql`
    UPDATE servers SET url = 'http://127.0.0.1:9/brain', heartbeat_at = now() - interval '10 seconds'
    WHERE id = ${server}`;
  try {
    const sessionId = await httpToolSession();
    const seq = await callComponent(h, sessionId, { tool: "app", input: {} });
    await until(
      "the worker to claim the call",
      async () => (await callRow(h.db.sql, sessionId, seq)).state !== "pending",
    );
    // Its beat comes a moment later, as the first beat after an outage does.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await callRow(h.db.sql, sessionId, seq)).state).toBe("running");
    await h.db.sql`UPDATE servers SET heartbeat_at = now() WHERE id = ${server}`;
    const ended = await waitForEnd(h.db.sql, sessionId, seq);
    // The application was invoked (and answered without finishing): not a setup failure.
    expect(ended.outcome?.error?.code).toBe("tool_unfinished");
    expect(app.callbacks).toEqual([`http://127.0.0.1:9/brain/v1/calls/${sessionId}/${seq}/frames`]);
  } finally {
    await stopServer(h.db.sql, server);
  }
});

it("with no server up for the whole wait (5 s), the call ends setup_failed and the application is not invoked", async () => {
  const before = app.callbacks.length;
  const sessionId = await httpToolSession();
  const seq = await callComponent(h, sessionId, { tool: "app", input: {} });
  const ended = await waitForEnd(h.db.sql, sessionId, seq, 60_000);
  expect(ended.outcome?.error?.code).toBe("setup_failed");
  expect(ended.outcome?.error?.message).toMatch(/No live Brain server/);
  expect(app.callbacks.length).toBe(before);
});
