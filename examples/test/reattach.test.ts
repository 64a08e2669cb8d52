import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testkit/database.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { spawnNode } from "../../testkit/server-process.js";

const db = startedBeforeAll(() => createTestDatabase(), { stop: (d) => d.drop() });

describe("examples/reattach", () => {
  it("a process with a background tool is killed; a new one reattaches and the session goes on", async () => {
    // `npm run example -- reattach`: a real server, a first host process killed with SIGKILL, a second one.
    const run = spawnNode("examples/run.mjs", { args: ["reattach"], env: { DATABASE_URL: db.url } });
    const { code } = await run.exited;
    const out = run.output();
    expect(code, out).toBe(0);
    expect(out).toMatch(/killed the first process \(\d+\) with SIGKILL/);
    expect(out).toMatch(/tool_call_ended \{"cause":"connection_lost","status":"unknown"\}/);
    expect(out).toContain("[resume");
    expect(out).toMatch(/activation_ended "The job finished\."/);
    // The job's progress came from both processes: the killed one and the reattached one.
    const pids = await db.sql<{ pid: number }[]>`
      SELECT DISTINCT (payload->'data'->>'pid')::int AS pid FROM brain.journal WHERE kind = 'job_progress'`;
    expect(pids).toHaveLength(2);
  }, 60_000);
});
