// The journal console in a real headless Chromium: a real server, a session driven through the
// public SDK with a host tool that emits and finishes, a model that reports tokens (a fake
// OpenAI-compatible provider). The page asks for the operator token, lists and filters sessions,
// shows a session's timeline record by record, follows it live while another turn runs, and
// lists open calls, hosts and processes. Journal text is hostile: none of it may become markup.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Brain, tool } from "@aexhq/brain";
import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { launchChromium } from "../../../testkit/browser.js";
import { startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { deferred, until } from "../../../testkit/wait.js";

/** Generous: the machine running the suite may be busy; every wait is on a condition. */
const UI_MS = 30_000;
const ARTIFACTS = join(import.meta.dirname, "..", "..", "..", "test-artifacts");
const HOSTILE = `<img src=x onerror="__pwned=1"><script>__pwned=2</script>`;

const server = startedBeforeAll(() => startBrain());
const openai = startedBeforeAll(() => startFakeOpenAI({ apiKey: "sk-console" }));
// Launched inside the test, not in a hook: without a Chromium the test fails (a failed hook would
// report it skipped).
let browser: Browser;
const client = startedBeforeAll(() => new Brain({ url: server.url, token: server.token }));

const gate = deferred();
const importer = tool({
  name: "importer",
  description: "Emits progress, then finishes; the second run waits for the test's gate.",
  input: z.object({ source: z.string() }),
  run: async ({ source }, ctx) => {
    await ctx.emit("import_started", { source, note: HOSTILE });
    if (source === "second") {
      await ctx.emit("import_progress", { done: 1, of: 2 });
      await gate.promise;
    }
    return ctx.finish({ imported: 3 });
  },
});

const model = () => ({ provider: "openai" as const, name: "gpt-test", apiKey: "sk-console", baseUrl: openai.url });

async function openConsole(path = ""): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(UI_MS);
  await page.goto(`${server.url}/console/${path}`);
  return page;
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.locator("#token").fill(token);
  await page.locator("#token-form button[type=submit]").click();
}

/** A screenshot in test-artifacts/, which CI keeps (console.png is the timeline). */
async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
}

const row = (page: Page, kind: string) => page.locator(`#timeline li[data-kind="${kind}"]`);

describe("the journal console", () => {
  it("shows sessions, a live timeline, open calls, hosts and processes, escaping journal text", async () => {
    browser = await launchChromium();
    try {
      await drive();
    } finally {
      await browser.close();
    }
  }, 180_000);
});

async function drive(): Promise<void> {
  // Turn 1: the model calls the tool, which emits and finishes; then it answers.
  openai.reply(
    { toolCalls: [{ name: "importer", input: { source: "s3://bucket" } }], usage: { input: 123, output: 45 } },
    { text: `imported ${HOSTILE}`, usage: { input: 200, output: 20 } },
  );
  const session = await client.sessions.create({ model: model(), tools: [importer()] });
  expect(await session.send(`import ${HOSTILE}`)).toBe(`imported ${HOSTILE}`);
  // Another session, ended, with no importer: what the filters tell apart.
  const other = await client.sessions.create({ model: { provider: "scripted", script: [] }, metadata: { k: "v" } });
  await other.end();

  const page = await openConsole();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // The token: a wrong one is refused, the operator's opens the console.
  await page.locator("#token-form").waitFor();
  await signIn(page, "not-the-operator-token");
  await expect.poll(() => page.locator("#token-error").textContent(), { timeout: UI_MS }).toMatch(/refused/);
  await signIn(page, server.token);
  await page.locator("#sessions").waitFor();
  expect(await page.evaluate('sessionStorage.getItem("brain.console.token")')).toBe(server.token);

  // Sessions: both, then filtered by status and by tool.
  const sessionRow = (id: string) => page.locator(`#sessions tr[data-session-id="${id}"]`);
  await sessionRow(session.id).waitFor();
  await sessionRow(other.id).waitFor();
  await shot(page, "console-sessions.png");
  await page.locator("#session-filter select[name=status]").selectOption("ended");
  await page.locator("#session-filter button[type=submit]").click();
  await sessionRow(session.id).waitFor({ state: "detached" });
  await sessionRow(other.id).waitFor();
  await page.locator("#session-filter select[name=status]").selectOption("");
  await page.locator("#session-filter input[name=tool]").fill("importer");
  await page.locator("#session-filter button[type=submit]").click();
  await sessionRow(other.id).waitFor({ state: "detached" });
  await sessionRow(session.id).waitFor();
  expect(page.url()).toContain("tool=importer");
  await page.locator("#session-filter select[name=since]").selectOption("15m");
  await page.locator("#session-filter button[type=submit]").click();
  await sessionRow(session.id).waitFor();

  // The timeline: every record of turn 1.
  await sessionRow(session.id).locator("a.session-link").click();
  await row(page, "activation_ended").waitFor();
  const user = row(page, "user_message");
  expect(await user.locator(".summary").textContent()).toBe(`import ${HOSTILE}`);
  const modelCall = row(page, "model_call_started").first();
  await expect
    .poll(() => modelCall.locator(".tokens").textContent(), { timeout: UI_MS })
    .toBe(" · 123 in / 45 out tokens");
  expect(await modelCall.locator(".badge").textContent()).toBe("ok");
  expect(await row(page, "model_call_ended").first().locator(".model-name").textContent()).toBe(" gpt-test");
  // The second model call was woken by the tool's observations, through the wake window.
  await expect
    .poll(() => row(page, "model_call_started").nth(1).locator(".wake").textContent(), { timeout: UI_MS })
    .toMatch(/^wake window \d+(\.\d+)? (ms|s)$/);
  const call = row(page, "tool_call_started").first();
  expect(await call.locator(".tool-name").textContent()).toBe("importer");
  expect(await call.locator(".badge").textContent()).toBe("ok");
  expect(await call.locator(".call-duration").textContent()).toMatch(/^ · \d+(\.\d+)? (ms|s)$/);
  expect(await call.locator(".call-events").textContent()).toBe(" · 1 event");
  const emitted = row(page, "import_started").first();
  expect(await emitted.getAttribute("data-extension")).toBe("true");
  expect(await emitted.locator(".event-data").textContent()).toContain("s3://bucket");
  expect(await emitted.locator(".event-data").textContent()).toContain("<img src=x");
  // Its whole payload, on demand.
  await emitted.locator("details summary").click();
  await expect
    .poll(async () => JSON.parse((await emitted.locator("pre").textContent()) ?? "null"), { timeout: UI_MS })
    .toEqual({ call: Number(await call.getAttribute("data-seq")), data: { source: "s3://bucket", note: HOSTILE } });
  expect(await row(page, "tool_result").first().locator(".badge").textContent()).toBe("ok");
  expect(await row(page, "tool_call_ended").first().locator(".badge").textContent()).toBe("ok");
  expect(await row(page, "tool_call_ended").first().locator(".call-duration").textContent()).toMatch(/ms|s$/);
  expect(await row(page, "assistant_message").first().locator(".summary").textContent()).toBe(`imported ${HOSTILE}`);
  expect(await row(page, "activation_ended").first().locator(".badge").textContent()).toBe("completed");
  const tokensIn = page.locator('#session-stats [data-stat="tokens in"] dd');
  await expect.poll(() => tokensIn.textContent(), { timeout: UI_MS }).toBe("323");
  // Hostile text stayed text.
  expect(await page.locator("#timeline img, #timeline script").count()).toBe(0);

  // Live: a second turn appears without a reload, its call open until the tool's gate opens.
  // Gone if the page reloads: what tells a live update from a reload.
  await page.evaluate("window.marker = 42");
  openai.reply(
    { toolCalls: [{ name: "importer", input: { source: "second" } }], usage: { input: 7, output: 3 } },
    { text: "second import done", usage: { input: 9, output: 4 } },
  );
  const second = session.send("import again");
  const running = row(page, "tool_call_started").nth(1);
  await running.waitFor();
  await row(page, "import_progress").waitFor();
  expect(await running.locator(".badge").textContent()).not.toBe("ok");
  expect(await running.locator(".call-events").textContent()).toBe(" · 2 events");
  // jsonb keeps its own key order.
  expect(await running.locator(".call-progress").textContent()).toBe(' · last: import_progress {"of":2,"done":1}');

  // Open calls, in a second tab (the token is per tab: it asks again).
  const calls = await openConsole("#/calls");
  await signIn(calls, server.token);
  const callSeq = Number(await running.getAttribute("data-seq"));
  const openRow = calls.locator(`#calls tr[data-session-id="${session.id}"][data-call="${callSeq}"]`);
  await openRow.waitFor();
  expect(await openRow.locator(".tool-name").textContent()).toBe("importer");
  expect(await openRow.locator("td:nth-child(4) .badge").textContent()).toBe("running");
  await shot(calls, "console-calls.png");

  gate.resolve();
  expect(await second).toBe("second import done");
  await expect.poll(() => running.locator(".badge").textContent(), { timeout: UI_MS }).toBe("ok");
  await row(page, "assistant_message").nth(1).waitFor();
  expect(await row(page, "assistant_message").nth(1).locator(".summary").textContent()).toBe("second import done");
  expect(await page.evaluate("window.marker")).toBe(42);
  await openRow.waitFor({ state: "detached" });
  await calls.locator("#calls tr.empty").waitFor();

  // Hosts and processes: the SDK's host is connected; this server is live.
  await calls.goto(`${server.url}/console/#/hosts`);
  const host = calls.locator("#hosts tbody tr[data-host-id]").first();
  await host.waitFor();
  expect(Number(await host.locator("td:nth-child(5)").textContent())).toBeGreaterThanOrEqual(1);
  const serverId = await until("the server's id", async () => (await fetchJson(server, "/healthz")).serverId);
  const proc = calls.locator(`#processes tr[data-process-id="${serverId}"]`);
  await proc.waitFor();
  // Live by its heartbeat (once a second): a busy machine may delay one, the page refreshes.
  await expect.poll(() => proc.locator(".badge").textContent(), { timeout: UI_MS }).toBe("live");
  await shot(calls, "console-hosts.png");

  expect(errors).toEqual([]);
  expect(await page.evaluate("window.__pwned")).toBeUndefined();
  await page.locator("#timeline li").first().scrollIntoViewIfNeeded();
  await shot(page, "console.png");
  await calls.close();
  await page.close();
}

async function fetchJson(target: InProcessBrain, path: string): Promise<{ serverId?: string }> {
  const answer = await fetch(`${target.url}${path}`);
  return (await answer.json()) as { serverId?: string };
}
