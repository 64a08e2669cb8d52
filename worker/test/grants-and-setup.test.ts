// What an Environment grants a component (the session's workspace, read-only, or no filesystem at
// all) and how setup failures end a call: `setup_failed`, the ordinary tool error path, no retry.
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { testComponent } from "../../testkit/components.js";
import {
  type Answer,
  answersOf,
  callComponent,
  callRecords,
  createComponentSession,
  harnessForTests,
  scriptComponent,
  uploadComponent,
  waitForEnd,
  workerForTests,
} from "./support.js";

const h = harnessForTests();
const script = scriptComponent(h);
workerForTests(h);

async function answers(sessionId: string, steps: Record<string, unknown>[]): Promise<Answer[]> {
  const seq = await callComponent(h, sessionId, { input: { steps: [...steps, { op: "finish-answers" }] } });
  const row = await waitForEnd(h.db.sql, sessionId, seq);
  expect(row.outcome?.status).toBe("ok");
  return answersOf(row).slice(1);
}

const WORKSPACE = { "README.md": "# hello\n", "src/main.ts": "export {};\n", "src/lib/util.ts": "// util\n" };

describe("workspace: read", () => {
  let session: string;
  beforeAll(async () => {
    session = await createComponentSession(h, [{ sha256: script.sha256, workspace: "read" }], WORKSPACE);
  });

  it("preopens the session's workspace as /workspace, readable", async () => {
    const [preopens, readme, nested, listing, sub] = await answers(session, [
      { op: "preopens" },
      { op: "read", path: "README.md" },
      { op: "read", path: "src/lib/util.ts" },
      { op: "list", path: "" },
      { op: "list", path: "src" },
    ]);
    expect(preopens).toEqual({ ok: ["/workspace"] });
    expect(readme).toEqual({ ok: "# hello\n" });
    expect(nested).toEqual({ ok: "// util\n" });
    expect(listing).toEqual({ ok: ["README.md:regular-file", "src:directory"] });
    expect(sub).toEqual({ ok: ["lib:directory", "main.ts:regular-file"] });
  });

  it("refuses every write, whoever the worker runs as", async () => {
    const [create, overwrite, mkdir, unlink] = await answers(session, [
      { op: "write", path: "new.txt" },
      { op: "write-existing", path: "README.md" },
      { op: "mkdir", path: "made" },
      { op: "unlink", path: "README.md" },
    ]);
    for (const a of [create, overwrite, mkdir, unlink]) expect(a).toEqual({ err: "read-only" });
    // And nothing changed: a later invocation sees the same workspace.
    const [readme, listing] = await answers(session, [
      { op: "read", path: "README.md" },
      { op: "list", path: "" },
    ]);
    expect(readme).toEqual({ ok: "# hello\n" });
    expect(listing).toEqual({ ok: ["README.md:regular-file", "src:directory"] });
  });

  it("keeps the component inside the workspace", async () => {
    const [up, absolute] = await answers(session, [
      { op: "escape", path: "../../../../etc/passwd" },
      { op: "escape", path: "/etc/passwd" },
    ]);
    expect(up).toEqual({ err: "not-permitted" });
    expect(absolute).toEqual({ err: "not-permitted" });
  });

  it("gives each invocation a fresh snapshot of the workspace table", async () => {
    await h.db
      .sql`INSERT INTO workspace_files (session_id, path, content) VALUES (${session}, 'added.txt', ${Buffer.from("new")})`;
    const [added] = await answers(session, [{ op: "read", path: "added.txt" }]);
    expect(added).toEqual({ ok: "new" });
  });
});

describe("no grant", () => {
  it("means no filesystem at all: no preopens", async () => {
    const session = await createComponentSession(h, [{ sha256: script.sha256 }], WORKSPACE);
    const [preopens, read] = await answers(session, [{ op: "preopens" }, { op: "read", path: "README.md" }]);
    expect(preopens).toEqual({ ok: [] });
    expect(read).toEqual({ err: "no-preopen" });
  });
});

describe("setup failures", () => {
  async function failedSetup(sha256: string, workspace?: "read" | "write") {
    const session = await createComponentSession(h, [{ sha256, ...(workspace ? { workspace } : {}) }]);
    const seq = await callComponent(h, session, { input: { steps: [{ op: "emit", kind: "ran", data: null }] } });
    const row = await waitForEnd(h.db.sql, session, seq);
    const records = await callRecords(h.db.sql, session, seq);
    // The ordinary tool error path: a result, then the end; the component never ran.
    expect(records.map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
    expect(row.outcome?.error?.code).toBe("setup_failed");
    return row.outcome!.error!;
  }

  it("a workspace write grant that got past the server is refused, not downgraded", async () => {
    const error = await failedSetup(script.sha256, "write");
    expect(error.message).toContain('"write"');
  });

  it("a component importing interfaces the worker does not provide is refused, naming them", async () => {
    const sha256 = await uploadComponent(h.db.sql, await testComponent("unsupported"));
    const error = await failedSetup(sha256);
    expect(error.message).toMatch(/unsupported runtime: .*wasi:http\//);
    expect((error.details as { unsupported: string[] }).unsupported).toEqual(
      expect.arrayContaining(["wasi:http/types", "wasi:http/outgoing-handler"]),
    );
  });

  it("a malformed component fails setup and is not retried", async () => {
    const sha256 = await uploadComponent(h.db.sql, randomBytes(256));
    const error = await failedSetup(sha256);
    expect(error.message).toMatch(/could not be loaded: jco could not transpile it/);
    // No retry: the job is done, and a second call fails the same way (nothing cached the failure).
    await failedSetup(sha256);
  });

  it("a component that was never uploaded fails setup", async () => {
    const error = await failedSetup("0".repeat(64));
    expect(error.message).toMatch(/has not been uploaded/);
  });
});
