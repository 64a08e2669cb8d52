// The console's decisions in a real headless Chromium: a turn whose two calls wait at an approval
// gate (one `always`, one held by its tool's predicate), one approved and one denied (with a reason) from the session's timeline (the approved call
// runs once, the denied one never reaches the host, and the buttons go); and a fork made from a
// record of a timeline, which opens the fork's own.
import { Brain, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../../testkit/brain.js";
import { launchChromium } from "../../../testkit/browser.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { journalOf } from "../../../testkit/tool-harness.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const UI_MS = 30_000;
const server = startedBeforeAll(() => startBrain());
const client = startedBeforeAll(() => new Brain({ url: server.url, token: server.token }));

describe("the console's approval gate", () => {
  it("approves one waiting call and denies another from the timeline", async () => {
    const runs: unknown[] = [];
    const pay = tool({
      name: "pay",
      description: "Pays someone.",
      input: z.object({ to: z.string() }),
      approval: "always",
      run: async (input, ctx) => {
        runs.push(input);
        return ctx.finish({ paid: input.to });
      },
    });
    // The same tool with its gate decided in the host: its predicate holds every call.
    const wire = tool({
      name: "wire",
      description: "Wires money abroad.",
      input: z.object({ to: z.string() }),
      approval: () => true,
      run: async (input, ctx) => {
        runs.push(input);
        return ctx.finish({ paid: input.to });
      },
    });
    const session = await client.sessions.create({
      model: scripted(
        {
          toolCalls: [
            { name: "pay", input: { to: "alice" } },
            { name: "wire", input: { to: "eve" } },
          ],
        },
        {
          text: "done",
        },
      ),
      tools: [pay(), wire()],
    });
    const turn = session.send("go");
    const waiting = await until("two calls waiting", async () => {
      const list = await session.approvals();
      return list.length === 2 ? list : undefined;
    });

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      page.setDefaultTimeout(UI_MS);
      await page.goto(`${server.url}/console/#/sessions/${session.id}`);
      await page.locator("#token").fill(server.token);
      await page.locator("#token-form button[type=submit]").click();
      const [first, second] = waiting.map((w) =>
        page.locator(`#timeline li[data-kind="tool_call_started"][data-seq="${w.call}"]`),
      );
      await first!.locator(".approval button.approve").click();
      await second!.locator(".approval input[name=reason]").fill("unknown payee");
      await second!.locator(".approval button.deny").click();
      await expect(turn).resolves.toBe("done");
      await page.locator(`#timeline li[data-seq="${waiting[0]!.call}"][data-status="ok"]`).waitFor();
      await page.locator(`#timeline li[data-seq="${waiting[1]!.call}"][data-status="error"]`).waitFor();
      expect(await page.locator("#timeline .approval").count()).toBe(0);
      expect(await page.locator('#timeline li[data-kind="approval_decided"]').count()).toBe(2);
    } finally {
      await browser.close();
    }
    expect(runs).toEqual([{ to: "alice" }]);
    const decided = (await journalOf(server.db.sql, session.id)).filter((r) => r.kind === "approval_decided");
    // The two clicks' requests may commit in either order.
    expect(decided.map((r) => r.payload)).toHaveLength(2);
    expect(decided.map((r) => r.payload)).toEqual(
      expect.arrayContaining([
        { call: waiting[0]!.call, decision: "approved", by: "operator" },
        { call: waiting[1]!.call, decision: "denied", by: "operator", reason: "unknown payee" },
      ]),
    );
  }, 120_000);

  it("forks a session from a record of its timeline and opens the fork", async () => {
    const session = await client.sessions.create({
      model: { provider: "scripted", script: [{ text: "first" }, { text: "second" }] },
    });
    await session.send("one");
    await session.send("two");
    const journal = await journalOf(server.db.sql, session.id);
    const firstEnd = journal.find((r) => r.kind === "activation_ended")!;
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      page.setDefaultTimeout(UI_MS);
      await page.goto(`${server.url}/console/#/sessions/${session.id}`);
      await page.locator("#token").fill(server.token);
      await page.locator("#token-form button[type=submit]").click();
      await page.locator(`#timeline li[data-seq="${firstEnd.seq}"] button.fork`).click();
      // The fork's timeline: its records are the source's up to there, and no further.
      await page.waitForURL((url) => url.hash.startsWith("#/sessions/") && !url.hash.includes(session.id));
      const forkId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
      await page.locator(`#timeline li[data-seq="${firstEnd.seq}"]`).waitFor();
      expect(await page.locator("#timeline li").count()).toBe(Number(firstEnd.seq));
      const [row] = await server.db.sql<{ forked_from: string; forked_at: number }[]>`
        SELECT forked_from, forked_at::int AS forked_at FROM brain.sessions WHERE id = ${forkId}`;
      expect(row).toEqual({ forked_from: session.id, forked_at: Number(firstEnd.seq) });
    } finally {
      await browser.close();
    }
  }, 120_000);
});
