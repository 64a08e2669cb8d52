// Finding 1 of the tenant review: an application token could make Brain send requests anywhere and
// read the answer. Every path that sends one now goes through the egress guard. A loopback service
// the operator never opened stands in for an internal one: each path is refused, at session
// creation where the target is known then, else as the call's `egress_denied` outcome, and the
// service receives nothing. Other internal ranges are shown refused by literals (judged before any
// socket is opened), never by sending them traffic.
import { hostEnv, httpEnv, httpTool, mcpEnv, mcpTools, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type BrainWithWorker, startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { startMcpServer } from "../../../worker/test/mcp/mcp-server.js";
import { callOutcomes, fetchIssue, startFakeApi } from "../environments/environments-support.js";

const victim = startedBeforeAll(() => startFakeApi(() => ({ json: { secret: "internal" } })));
const mcp = startedBeforeAll(startMcpServer);
/** Loopback opened nowhere: what every start but the embedded development default does. */
const strict = startedBeforeAll(() => startBrainWithWorker({ BRAIN_EGRESS_ALLOW: "" }));
/** The server reaches loopback (its sessions are created), the worker does not: refusals at call time. */
const split = startedBeforeAll(() => startBrainWithWorker({}, { workerEgressAllow: "" }));

const scripted = (calls: { name: string; input: unknown }[]) => ({
  provider: "scripted" as const,
  script: [{ toolCalls: calls as never }, { text: "done" }],
});
const idle = { provider: "scripted" as const, script: [{ text: "idle" }] };

/** Creates a session through the SDK; the refusal's code (or "created"). */
async function refusedCode(placement: Parameters<BrainWithWorker["client"]["sessions"]["create"]>[0]) {
  return strict.client.sessions.create(placement).then(
    () => "created",
    (e: { code?: string; message: string }) => `${e.code}: ${e.message}`,
  );
}

/** Creates a session over HTTP (a body the SDK would not send); the status and error body. */
async function createRefused(
  body: Record<string, unknown>,
): Promise<{ status: number; error: Record<string, unknown> }> {
  const stack = strict;
  const res = await fetch(`${stack.brain.url}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.brain.token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: idle, ...body }),
  });
  return { status: res.status, error: ((await res.json()) as { error: Record<string, unknown> }).error };
}

const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  run: async () => null,
});

describe("egress: refused at session creation, nothing sent", () => {
  it("refuses every kind of target on an address the operator did not open", async () => {
    const url = victim.url;
    const refusals = {
      "HTTP Environment": await refusedCode({
        model: idle,
        tools: [fetchIssue({ env: httpEnv({ name: "github", baseUrl: url }), repository: "a/b" })],
      }),
      "model baseUrl": await refusedCode({
        model: { provider: "openai", name: "m", apiKey: "sk-test-1234", baseUrl: `${url}/v1` },
      }),
      "MCP server": await refusedCode({ model: idle, tools: [mcpTools(mcpEnv({ name: "tools", url: mcp.url }))] }),
      "v1 HTTP tool": await refusedCode({
        model: idle,
        tools: [httpTool({ name: "echo", description: "Echo.", input: z.object({}), url: `${url}/echo` })],
      }),
      "Application tool extension": await refusedCode({
        model: idle,
        tools: [lookup({ env: hostEnv({ name: "app", url: `${url}/tools` }) })],
      }),
    };
    for (const [what, refusal] of Object.entries(refusals)) {
      expect(refusal, what).toMatch(/^egress_denied: .*127\.0\.0\.1 is a loopback address/);
    }
    const { status, error } = await createRefused({ environments: [{ type: "http", name: "e", baseUrl: url }] });
    expect([status, error.code]).toEqual([403, "egress_denied"]);
    expect(victim.seen).toEqual([]);
    expect(mcp.seen).toEqual([]);
    const [row] = await strict.brain.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.sessions`;
    expect(row?.n).toBe(0);
  });

  it("names the internal range of literal addresses without opening a connection to them", async () => {
    for (const [address, range] of [
      ["169.254.169.254", "cloud metadata"],
      ["[fd00:ec2::254]", "cloud metadata"],
      ["10.0.0.1", "private"],
      ["192.168.1.1", "private"],
      ["172.16.0.1", "private"],
      ["100.64.0.1", "carrier-grade NAT"],
      ["[fe80::1]", "link-local"],
      ["[fd12:3456::1]", "unique-local"],
      ["0.0.0.0", "unspecified"],
    ]) {
      const { status, error } = await createRefused({
        environments: [{ type: "http", name: "meta", baseUrl: `http://${address}/latest/` }],
      });
      expect([address, status, error.code, (error.details as { range?: string })?.range]).toEqual([
        address,
        403,
        "egress_denied",
        range,
      ]);
    }
  });

  it("answers an open port and a closed one alike: refusals make no port scanner", async () => {
    const open = new URL(victim.url).port;
    const a = await createRefused({ environments: [{ type: "http", name: "e", baseUrl: `http://127.0.0.1:${open}` }] });
    const b = await createRefused({ environments: [{ type: "http", name: "e", baseUrl: "http://127.0.0.1:9" }] });
    expect(String(a.error.message).replace(open, "P")).toBe(String(b.error.message).replace("9", "P"));
  });

  it("refuses URLs with credentials and caller-set Host or hop-by-hop headers as invalid requests", async () => {
    const withCredentials = await createRefused({
      environments: [{ type: "http", name: "e", baseUrl: "https://user:pw@93.184.216.34/" }],
    });
    expect([withCredentials.status, withCredentials.error.code]).toEqual([400, "invalid_request"]);
    expect(JSON.stringify(withCredentials.error.details)).toMatch(/without credentials/);
    for (const header of ["Host", "connection", "Transfer-Encoding", "proxy-authorization"]) {
      const { status, error } = await createRefused({
        environments: [{ type: "http", name: "e", baseUrl: "https://93.184.216.34/", headers: { [header]: "x" } }],
      });
      expect([header, status, error.code]).toEqual([header, 400, "invalid_request"]);
    }
  });

  it("refuses ctx.environments.create and update toward such an address, journaled as refused", async () => {
    const stack = strict;
    const url = victim.url;
    const admin = tool({
      name: "admin",
      description: "Points an Environment inward.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const codes: string[] = [];
        for (const attempt of [
          () => ctx.environments.create({ name: "inward", baseUrl: url }),
          () => ctx.environments.update("safe", { baseUrl: "http://169.254.169.254/" }),
        ]) {
          await attempt().then(
            () => codes.push("ok"),
            (e: { code?: string }) => codes.push(e.code ?? "thrown"),
          );
        }
        return ctx.finish({ codes } as never);
      },
    });
    // "safe" is a public address, judged at creation without a lookup and never sent anything.
    const session = await stack.client.sessions.create({
      model: scripted([{ name: "admin", input: {} }]),
      tools: [
        admin(),
        fetchIssue({ env: httpEnv({ name: "safe", baseUrl: "https://93.184.216.34" }), repository: "a/b" }),
      ],
      environmentControl: { operations: ["create", "update"] },
    });
    expect(await session.send("go")).toBe("done");
    const [outcome] = await callOutcomes(stack.brain.db.sql, session.id);
    expect(outcome?.value).toEqual({ codes: ["egress_denied", "egress_denied"] });
    expect(victim.seen).toEqual([]);
  });
});

describe("egress: refused when the call is sent", () => {
  it("ends each worker-run call egress_denied, and the service receives nothing", async () => {
    const stack = split;
    const url = victim.url;
    const echo = httpTool({ name: "echo", description: "Echo.", input: z.object({}), url: `${url}/echo` });
    const served = tool({
      name: "served",
      description: "Served over HTTP.",
      input: z.object({ id: z.string() }),
      run: async () => null,
    });
    const session = await stack.client.sessions.create({
      model: scripted([
        { name: "fetch_issue", input: { number: 1 } },
        { name: "echo", input: {} },
        { name: "served", input: { id: "1" } },
        { name: "slow", input: { label: "x" } },
      ]),
      tools: [
        fetchIssue({ env: httpEnv({ name: "github", baseUrl: url }), repository: "a/b" }),
        echo,
        served({ env: hostEnv({ name: "app", url: `${url}/tools` }) }),
        mcpTools(mcpEnv({ name: "tools", url: mcp.url }), { only: ["slow"] }),
      ],
    });
    expect(await session.send("go")).toBe("done");
    const outcomes = await callOutcomes(stack.brain.db.sql, session.id);
    expect(outcomes.map((o) => o.error?.code)).toEqual([
      "egress_denied",
      "egress_denied",
      "egress_denied",
      "egress_denied",
    ]);
    expect(outcomes[0]?.error?.details).toMatchObject({ range: "loopback" });
    expect(victim.seen).toEqual([]);
    // The server listed the MCP server's tools at creation; the worker never called one.
    expect(mcp.seen.filter((s) => s.method === "tools/call")).toEqual([]);
    expect(mcp.slowStarted).toEqual([]);
  });
});
