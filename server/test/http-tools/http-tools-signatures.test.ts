// Finding 5 of the tenant review: an application's tool handler could not tell Brain from anyone
// else. Tenant A placed a v1 HTTP tool aimed at tenant B's handler with a forged invocation as its
// input: B's tool ran on A's input and reported to A. Brain now signs each invocation for the URL
// it POSTs to (Ed25519, keys derived from BRAIN_SECRET_KEY, published at GET /v1/keys), and
// toolHandler refuses what Brain did not sign for it: unsigned, forged, tampered, expired, or
// signed for another handler.
import { hostEnv, httpTool, tool, toolHandler } from "@aexhq/brain";
import { INVOCATION_SIGNATURE_HEADER } from "@aexhq/brain-contracts";
import { InvocationSigner, SecretBox } from "@aexhq/brain-db/secrets";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { TEST_SECRET_KEY } from "../../../testkit/secrets.js";
import { runOnce, serveApp, theCall } from "./http-tools-harness.js";

const stack = startedBeforeAll(() => startBrainWithWorker());

/** Tenant B's tool: notes every run, so a test can tell whether it ran. */
const ran: unknown[] = [];
const lookup = tool({
  name: "lookup",
  description: "Looks up one record.",
  input: z.object({ id: z.string() }),
  run: async ({ id }, ctx) => {
    ran.push(id);
    return ctx.finish({ value: `record ${id}` });
  },
});

/** B's handler, verifying against Brain's published keys. */
const b = startedBeforeAll(() => serveApp(toolHandler([lookup()], { brainUrl: stack.brain.url })));

const forged = (callbackUrl: string) => ({
  protocol: "brain.tool/2",
  tool: "lookup",
  sessionId: "00000000-0000-4000-8000-000000000000",
  sequence: 7,
  input: { id: "stolen" },
  options: null,
  deadline: null,
  callback: { url: callbackUrl, token: "whatever" },
});

async function post(url: string, body: string, signature?: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(signature === undefined ? {} : { [INVOCATION_SIGNATURE_HEADER]: signature }),
    },
    body,
  });
  const answer = (await res.json()) as { error?: { code: string } };
  return { status: res.status, ...(answer.error ? { code: answer.error.code } : {}) };
}

describe("signed invocations", () => {
  it("run B's tool when Brain invokes it, signed for B's URL", async () => {
    const { sessionId } = await runOnce(stack, lookup({ env: hostEnv({ name: "b", url: b.url }) }), { id: "42" });
    expect((await theCall(stack.brain.db.sql, sessionId)).outcome).toEqual({
      status: "ok",
      value: { value: "record 42" },
    });
    expect(ran).toContain("42");
  });

  it("refuses tenant A's forged invocation sent through a v1 HTTP tool: B's tool never runs", async () => {
    const before = ran.length;
    // A's v1 tool POSTs its input, a forged invocation, to B's handler: Brain never signs that.
    const aimed = httpTool({ name: "aimed", description: "A's.", input: z.object({}).passthrough(), url: b.url });
    const { sessionId } = await runOnce(stack, aimed, forged("http://127.0.0.1:9/attacker"));
    const { outcome } = await theCall(stack.brain.db.sql, sessionId);
    expect(outcome).toMatchObject({ status: "error", error: { code: "http_error", details: { status: 401 } } });
    expect(ran.length).toBe(before);
  });

  it("refuses unsigned, forged, tampered, expired and misdirected invocations alike", async () => {
    const before = ran.length;
    const signer = new InvocationSigner(new SecretBox(Buffer.from(TEST_SECRET_KEY, "hex")));
    const body = JSON.stringify(forged(`${stack.brain.url}/v1/calls/x/1/frames`));
    const otherBrain = new InvocationSigner(new SecretBox(Buffer.alloc(32, 7)));
    const cases: [string, string | undefined, string][] = [
      ["unsigned", undefined, body],
      ["garbage", "v1; nothing", body],
      ["another Brain's key", otherBrain.sign(body, b.url), body],
      ["tampered", signer.sign(body, b.url), body.replace("stolen", "altered")],
      ["expired", signer.sign(body, b.url, Date.now() - 3_600_000), body],
      ["for another handler", signer.sign(body, `${b.url}/elsewhere`), body],
    ];
    for (const [what, signature, sent] of cases) {
      expect([what, await post(b.url, sent, signature)]).toEqual([what, { status: 401, code: "unauthorized" }]);
    }
    expect(ran.length).toBe(before);
    // The same body, signed by Brain for this handler, is an invocation again (it reaches the tool).
    const genuine = await post(b.url, body, signer.sign(body, b.url));
    expect(genuine.status).toBe(200);
  });

  it("publishes the verifying keys, and a handler that cannot know them refuses to start", async () => {
    const keys = (await (await fetch(`${stack.brain.url}/v1/keys`)).json()) as { keys: { kty: string; crv: string }[] };
    expect(keys.keys.map((k) => [k.kty, k.crv])).toEqual([["OKP", "Ed25519"]]);
    const saved = process.env.BRAIN_URL;
    delete process.env.BRAIN_URL;
    try {
      expect(() => toolHandler([lookup()])).toThrow(/pass \{ brainUrl \}/);
      expect(() => toolHandler([lookup()], { verify: false })).not.toThrow();
    } finally {
      if (saved !== undefined) process.env.BRAIN_URL = saved;
    }
  });
});
