// The v1 plain-JSON convention of http() / httpTool() placements, end to end: a Brain server, a
// worker that POSTs the input to a real application HTTP server, and the journal.
import type { IncomingMessage, ServerResponse } from "node:http";
import { http, httpTool, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { runOnce, serveApp, theCall } from "./http-tools-harness.js";

const received: { path: string; contentType: string | undefined; accept: string | undefined; body: unknown }[] = [];

/** Answers by path: each route plays one kind of application. */
function route(req: IncomingMessage, res: ServerResponse, body: unknown) {
  const json = (status: number, value: unknown, type = "application/json") => {
    res.writeHead(status, { "content-type": type });
    res.end(typeof value === "string" ? value : JSON.stringify(value));
  };
  switch (req.url) {
    case "/echo":
      return json(200, { echoed: body });
    case "/envelope":
      return json(200, { status: "error", error: { code: "looks_like", message: "but it is data" } });
    case "/wrong-shape":
      return json(200, { value: 42 });
    case "/fails":
      return json(503, { reason: "x".repeat(5000) });
    case "/nul":
      return json(200, '{"text":"a\\u0000b"}');
    case "/surrogate":
      return json(200, '{"text":"a\\ud800b"}');
    case "/fails-nul":
      return json(500, "broken\u0000body\ud800", "text/plain");
    case "/not-json":
      return json(200, "<html>hello</html>", "text/html");
    default:
      return json(404, { error: "no route" });
  }
}

const stack = startedBeforeAll(() => startBrainWithWorker());
const app = startedBeforeAll(() =>
  serveApp((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text) as unknown;
      received.push({
        path: req.url ?? "",
        contentType: req.headers["content-type"],
        accept: req.headers.accept,
        body,
      });
      route(req, res, body);
    });
  }, ""),
);

const echo = (path: string, output?: z.ZodType) =>
  httpTool({
    name: "echo",
    description: "Echoes its input.",
    input: z.object({ id: z.string() }),
    ...(output ? { output } : {}),
    url: `${app.url}${path}`,
  });

describe("http() / httpTool(): the response body is the result", () => {
  it("POSTs the input as JSON and journals the body as an ok result", async () => {
    const placed = echo("/echo", z.object({ echoed: z.object({ id: z.string() }) }));
    expect(placed.placement).toMatchObject({
      env: { type: "host", url: `${app.url}/echo`, protocol: "json" },
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
      outputSchema: { type: "object" },
    });
    const { sessionId } = await runOnce(stack, placed, { id: "42" });
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(received.at(-1)).toEqual({
      path: "/echo",
      contentType: "application/json",
      accept: "application/json",
      body: { id: "42" },
    });
    expect(call.records.map((r) => [r.kind, r.payload.outcome])).toEqual([
      ["tool_result", { status: "ok", value: { echoed: { id: "42" } } }],
      ["tool_call_ended", { status: "ok", value: { echoed: { id: "42" } } }],
    ]);
  });

  it("a body that looks like an error envelope stays plain data", async () => {
    const { sessionId } = await runOnce(stack, echo("/envelope"), { id: "1" });
    expect((await theCall(stack.brain.db.sql, sessionId)).outcome).toEqual({
      status: "ok",
      value: { status: "error", error: { code: "looks_like", message: "but it is data" } },
    });
  });

  it("a body failing the output schema ends the call invalid_output", async () => {
    const { sessionId } = await runOnce(stack, echo("/wrong-shape", z.object({ value: z.string() })), { id: "1" });
    const { outcome } = await theCall(stack.brain.db.sql, sessionId);
    expect(outcome.status).toBe("error");
    expect(outcome.error?.code).toBe("invalid_output");
    expect(outcome.error?.details).toEqual([{ path: "/value", message: "must be string" }]);
  });

  it("a non-2xx answer is http_error with its status and a bounded body excerpt", async () => {
    const { sessionId } = await runOnce(stack, echo("/fails"), { id: "1" });
    const { outcome } = await theCall(stack.brain.db.sql, sessionId);
    expect(outcome.error?.code).toBe("http_error");
    expect(outcome.error?.message).toContain("503");
    const details = outcome.error?.details as { status: number; body: string };
    expect(details.status).toBe(503);
    expect(details.body.startsWith('{"reason":"xxx')).toBe(true);
    expect(details.body.length).toBe(2048);
  });

  it("a body that is not JSON, and a URL nobody answers, are http_error", async () => {
    const html = await runOnce(stack, echo("/not-json"), { id: "1" });
    const notJson = (await theCall(stack.brain.db.sql, html.sessionId)).outcome;
    expect(notJson.error?.code).toBe("http_error");
    expect(notJson.error?.details).toEqual({ status: 200, body: "<html>hello</html>" });

    const closed = await serveApp(() => {});
    await closed.close();
    const gone = httpTool({ name: "gone", description: "d", input: z.object({}), url: closed.url });
    const { sessionId } = await runOnce(stack, gone, {});
    const unreachable = (await theCall(stack.brain.db.sql, sessionId)).outcome;
    expect(unreachable.error?.code).toBe("http_error");
    expect(unreachable.error?.message).toContain("could not be reached");
  });

  it("a body with text Postgres cannot store ends the call invalid_output at once", async () => {
    for (const path of ["/nul", "/surrogate"]) {
      const { sessionId } = await runOnce(stack, echo(path), { id: "1" });
      const { outcome } = await theCall(stack.brain.db.sql, sessionId);
      expect(outcome.error?.code, path).toBe("invalid_output");
      expect(outcome.error?.message).toMatch(/cannot be stored/);
    }
  });

  it("a non-2xx body with NUL bytes is still recorded as http_error, its excerpt made storable", async () => {
    const { sessionId } = await runOnce(stack, echo("/fails-nul"), { id: "1" });
    const { outcome } = await theCall(stack.brain.db.sql, sessionId);
    expect(outcome.error?.code).toBe("http_error");
    expect(outcome.error?.details).toMatchObject({ body: "broken\ufffdbody\ufffd" });
  });

  it("tool({ ... })({ env: http(url) }) is the same placement, served the same way", async () => {
    const declared = tool({
      name: "echo",
      description: "Echoes its input.",
      input: z.object({ id: z.string() }),
      run: async () => ({ never: "called here" }),
    });
    const { sessionId } = await runOnce(stack, declared({ env: http(`${app.url}/echo`) }), { id: "7" });
    expect((await theCall(stack.brain.db.sql, sessionId)).outcome).toEqual({
      status: "ok",
      value: { echoed: { id: "7" } },
    });
  });
});
