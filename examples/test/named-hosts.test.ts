import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testkit/database.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { spawnNode } from "../../testkit/server-process.js";

const db = startedBeforeAll(() => createTestDatabase(), { stop: (d) => d.drop() });

describe("examples/named-hosts", () => {
  it("a frontend's session is served by two replica processes of the named host, its calls spread over both", async () => {
    // `npm run example -- named-hosts`: a real server, two replica processes and the frontend.
    const run = spawnNode("examples/run.mjs", { args: ["named-hosts"], env: { DATABASE_URL: db.url } });
    const { code } = await run.exited;
    const out = run.output();
    expect(code, out).toBe(0);
    expect(out).toContain("looked up 4 records");
    expect(out.match(/customer:\d served by process \d+/g)).toHaveLength(4);
    expect(out).toContain("SERVED BY 2 REPLICAS");
  }, 60_000);
});
