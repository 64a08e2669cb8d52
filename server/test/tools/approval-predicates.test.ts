// Approval by a predicate: a tool declared with `approval: (input) => boolean` is asked, in the
// host that declares it, before each call runs. Its answer is journaled (approval_checked); true
// holds the call undispatched for a person, as an `always` gate does, and an approved call runs
// once without the predicate being asked again; false runs it at once. The frame protocol under
// it refuses an answer for a call that is not the host's to check.
import { type BrainError, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, hostTool, postMessage } from "../../../testkit/api.js";
import { connectHost, type HostSocket, registerHostOn, socketsClosedAfterAll } from "../../../testkit/host-sockets.js";
import { callsThenDone, journalOf, serverAndClient, until } from "../../../testkit/tool-harness.js";

const { server, client: brain } = serverAndClient();
const sockets = socketsClosedAfterAll();

const Transfer = z.object({ to: z.string(), amount: z.number().positive() });

/** Sends money; a person must approve any transfer over 100. */
function transferTool(runs: unknown[], asked: unknown[], predicate?: (input: z.output<typeof Transfer>) => boolean) {
  return tool({
    name: "transfer",
    description: "Sends money.",
    input: Transfer,
    approval: async (input) => {
      asked.push(input);
      return predicate ? predicate(input) : input.amount > 100;
    },
    run: async (input, ctx) => {
      runs.push(input);
      return ctx.finish({ sent: input.amount });
    },
  });
}

async function waitingCall(sessionId: string) {
  return until("a call waiting for approval", async () => {
    const [row] = await server.db.sql<{ call: number; input_hash: string; input: unknown; requested_at: Date }[]>`
      SELECT call::int AS call, input_hash, input, requested_at FROM brain.approvals WHERE session_id = ${sessionId}`;
    return row;
  });
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as BrainError,
  );

describe("approval predicates", () => {
  it("a false answer is journaled and the call runs at once", async () => {
    const runs: unknown[] = [];
    const asked: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "alice", amount: 10 } }),
      tools: [transferTool(runs, asked)()],
    });
    await expect(session.send("pay alice")).resolves.toBe("done");
    expect(asked).toEqual([{ to: "alice", amount: 10 }]);
    expect(runs).toEqual([{ to: "alice", amount: 10 }]);
    const journal = await journalOf(server.db.sql, session.id);
    const started = journal.find((r) => r.kind === "tool_call_started")!;
    expect(started.payload.approval).toBeUndefined();
    const checked = journal.filter((r) => r.kind === "approval_checked");
    expect(checked.map((r) => r.payload)).toEqual([{ call: started.seq, required: false }]);
    // Asked before the handler ran: the answer precedes the call's result.
    expect(checked[0]!.seq).toBeLessThan(journal.find((r) => r.kind === "tool_result")!.seq);
  });

  it("a true answer holds the call for a person; approved, it runs once, unasked the second time", async () => {
    const runs: unknown[] = [];
    const asked: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "bob", amount: 500 } }),
      tools: [transferTool(runs, asked)()],
    });
    const turn = session.send("pay bob");
    const waiting = await waitingCall(session.id);
    expect(waiting.input).toEqual({ to: "bob", amount: 500 });
    expect(waiting.input_hash).toMatch(/^[0-9a-f]{64}$/);
    const [row] = await server.db.sql<{ state: string; connection_id: string | null }[]>`
      SELECT state, connection_id FROM brain.calls WHERE session_id = ${session.id} AND seq = ${waiting.call}`;
    expect(row).toEqual({ state: "awaiting", connection_id: null });
    expect(await session.approvals()).toEqual([
      expect.objectContaining({ call: waiting.call, tool: "transfer", inputHash: waiting.input_hash }),
    ]);
    const journal = await journalOf(server.db.sql, session.id);
    expect(journal.find((r) => r.kind === "approval_checked")!.payload).toEqual({
      call: waiting.call,
      required: true,
      inputHash: waiting.input_hash,
    });
    expect(runs).toEqual([]);

    await session.approve(waiting.call);
    await expect(turn).resolves.toBe("done");
    expect(runs).toEqual([{ to: "bob", amount: 500 }]);
    expect(asked).toHaveLength(1);
    const kinds = (await journalOf(server.db.sql, session.id)).map((r) => r.kind);
    expect(kinds.filter((k) => k.startsWith("approval_"))).toEqual(["approval_checked", "approval_decided"]);
    expect(await rejection(session.approve(waiting.call))).toMatchObject({ code: "call_not_waiting" });
  });

  it("an edited approval runs the edited input; a denial never reaches the handler", async () => {
    const runs: unknown[] = [];
    const asked: unknown[] = [];
    const session = await brain.sessions.create({
      model: {
        provider: "scripted",
        script: [
          { toolCalls: [{ name: "transfer", input: { to: "carol", amount: 900 } }] },
          { toolCalls: [{ name: "transfer", input: { to: "mallory", amount: 9000 } }] },
          { text: "done" },
        ],
      },
      tools: [transferTool(runs, asked)()],
    });
    const turn = session.send("pay twice");
    const first = await waitingCall(session.id);
    await session.approve(first.call, { input: { to: "carol", amount: 90 } });
    const second = await until("the second call waiting", async () => {
      const listed = await session.approvals();
      return listed.find((a) => a.call !== first.call);
    });
    await session.deny(second.call, { reason: "unknown payee" });
    await expect(turn).resolves.toBe("done");
    expect(runs).toEqual([{ to: "carol", amount: 90 }]);
    const ended = (await journalOf(server.db.sql, session.id)).filter((r) => r.kind === "tool_call_ended");
    expect(ended.map((r) => r.payload)).toEqual([
      { call: first.call, outcome: { status: "ok", value: { sent: 90 } } },
      {
        call: second.call,
        outcome: expect.objectContaining({ status: "error", error: expect.objectContaining({ code: "denied" }) }),
      },
    ]);
  });

  it("a predicate that throws holds the call: the gate fails closed", async () => {
    const runs: unknown[] = [];
    const asked: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "dave", amount: 1 } }),
      tools: [
        transferTool(runs, asked, () => {
          throw new Error("the risk service is down");
        })(),
      ],
    });
    const turn = session.send("pay dave");
    const { call } = await waitingCall(session.id);
    expect(runs).toEqual([]);
    await session.deny(call);
    await expect(turn).resolves.toBe("done");
    expect(runs).toEqual([]);
  });

  it("watchApprovals yields a call its predicate held", async () => {
    const runs: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "erin", amount: 700 } }),
      tools: [transferTool(runs, [])()],
    });
    const abort = new AbortController();
    const watched = session.watchApprovals({ signal: abort.signal })[Symbol.asyncIterator]();
    const turn = session.send("pay erin");
    const held = await watched.next();
    expect(held.value).toMatchObject({ tool: "transfer", input: { to: "erin", amount: 700 } });
    expect(held.value!.inputHash).toBe((await waitingCall(session.id)).input_hash);
    await session.approve(held.value!.call);
    await expect(turn).resolves.toBe("done");
    abort.abort();
    expect(runs).toEqual([{ to: "erin", amount: 700 }]);
  });
});

describe("approval frames", () => {
  /** A raw host with one call of a fresh session in flight (its invoke has arrived). */
  async function openCall(): Promise<{ socket: HostSocket; sessionId: string; sequence: number }> {
    const host = await registerHostOn(server);
    const socket = await connectHost(server, host.id, host.token, sockets);
    expect((await socket.next()).type).toBe("welcome");
    const session = await createSession(server, {
      hostId: host.id,
      model: callsThenDone({ name: "t", input: { n: 1 } }),
      tools: [{ ...hostTool("t"), approval: "predicate" }],
    });
    await postMessage(server, session.id, "go");
    const invoke = await socket.next();
    if (invoke.type !== "invoke") throw new Error(`expected an invoke, got ${invoke.type}`);
    expect(invoke.approved).toBeUndefined();
    return { socket, sessionId: session.id, sequence: invoke.sequence };
  }

  it("an approved call comes back marked approved, and a second answer for it is refused", async () => {
    const { socket, sessionId, sequence } = await openCall();
    socket.ws.send(JSON.stringify({ type: "approval", id: 1, sessionId, sequence, required: true }));
    expect(await socket.next()).toMatchObject({ type: "ack", id: 1 });
    // Held: another answer is not this host's to give any more.
    socket.ws.send(JSON.stringify({ type: "approval", id: 2, sessionId, sequence, required: false }));
    expect(await socket.next()).toMatchObject({ type: "reject", id: 2, error: { code: "invalid_frame" } });
    const approved = await brain.sessions.get(sessionId).then((s) => s.approve(sequence));
    expect(approved).toBeGreaterThan(sequence);
    const invoke = await socket.next();
    expect(invoke).toMatchObject({ type: "invoke", sessionId, sequence, approved: true, input: { n: 1 } });
    socket.ws.send(JSON.stringify({ type: "approval", id: 3, sessionId, sequence, required: true }));
    expect(await socket.next()).toMatchObject({ type: "reject", id: 3, error: { code: "invalid_frame" } });
    const checked = (await journalOf(server.db.sql, sessionId)).filter((r) => r.kind === "approval_checked");
    expect(checked).toHaveLength(1);
    socket.ws.send(JSON.stringify({ type: "finish", id: 4, sessionId, sequence, outcome: { status: "ok", value: 1 } }));
    expect(await socket.next()).toMatchObject({ type: "ack", id: 4 });
  });

  it("an answer for a call that is not the host's is refused and writes nothing", async () => {
    const { socket, sessionId, sequence } = await openCall();
    const before = (await journalOf(server.db.sql, sessionId)).length;
    socket.ws.send(JSON.stringify({ type: "approval", id: 1, sessionId, sequence: sequence + 50, required: true }));
    expect(await socket.next()).toMatchObject({ type: "reject", id: 1, error: { code: "call_not_found" } });
    const other = await openCall();
    socket.ws.send(
      JSON.stringify({ type: "approval", id: 2, sessionId: other.sessionId, sequence: other.sequence, required: true }),
    );
    expect(await socket.next()).toMatchObject({ type: "reject", id: 2, error: { code: "call_not_found" } });
    socket.ws.send(JSON.stringify({ type: "approval", id: 3, sessionId, sequence, required: "yes" }));
    expect(await socket.next()).toMatchObject({ type: "reject", id: 3, error: { code: "invalid_frame" } });
    expect((await journalOf(server.db.sql, sessionId)).length).toBe(before);
    const [row] = await server.db.sql<{ state: string }[]>`
      SELECT state FROM brain.calls WHERE session_id = ${other.sessionId} AND seq = ${other.sequence}`;
    expect(row!.state).toBe("running");
  });
});
