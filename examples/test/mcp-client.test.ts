// examples/mcp-client as a user runs it: its own Node process, the official MCP SDK client against
// a spawned Brain server's MCP endpoint.
import { describe, expect, it } from "vitest";
import { spawnBrain } from "../../testkit/brain.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { runExample } from "./support.js";

const brain = startedBeforeAll(() => spawnBrain());

describe("examples/mcp-client", () => {
  it("lists the session's tools, calls one, and runs one as a task", async () => {
    const { lines } = await runExample(brain, "examples/mcp-client/main.mjs");
    expect(lines).toContain("tools: weather");
    expect(lines).toContain('plain: {"city":"Paris","celsius":15}');
    expect(lines).toContain('task result: {"city":"Lisbon","celsius":16}');
    expect(lines).toContain("task: completed");
    expect(lines).toContain('task result again: {"city":"Lisbon","celsius":16}');
  }, 60_000);
});
