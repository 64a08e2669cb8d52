import { errorOutcome, type Outcome, type RecordPayload, type ToolPlacement } from "@aexhq/brain-contracts";
import type { ModelToolCall } from "@aexhq/brain-core/models";
import {
  type Appended,
  claimNamedCalls,
  claimPendingCalls,
  endCalls,
  type NewCall,
  type NewRecord,
} from "@aexhq/brain-db/ops";
import { callDeadline } from "../loop/call-deadline.js";
import type { RoutedSession, SessionInfo } from "../loop/session-info.js";
import type { McpCall } from "../mcp/mcp-call.js";
import type { Services } from "../services.js";
import { inputHash } from "./approval-hash.js";
import type { HostLink } from "./link.js";

type CallBase = Pick<NewCall, "tool" | "activationSeq" | "deadlineAt" | "origin">;
type StartedPayload = RecordPayload<"tool_call_started">;

/**
 * Routes tool calls to hosts. A call's tool_call_started commits first; when its host is connected
 * to this process the same commit marks it dispatched on that connection, and the frame is sent
 * after the commit. Otherwise the call waits `pending` and whichever server holds the host's
 * connection claims it (a committed claim) before sending.
 */
export class Dispatcher {
  /** Planned calls routed to nobody for another reason than an unknown tool: ended with this outcome. */
  private readonly refusals = new WeakMap<NewRecord, Outcome>();

  constructor(private readonly rt: Pick<Services, "config" | "hosts" | "writer" | "liveness" | "distributed">) {}

  /**
   * tool_call_started records for a model response; each carries its routing and its deadline
   * (`caller`: the session's and turn's deadline, see loop/call-deadline.ts). Calls past `room`
   * (the owner's open-calls quota) are journaled and routed to nobody: refuseUnrouted ends them.
   */
  plan(
    session: SessionInfo,
    activation: number,
    toolCalls: ModelToolCall[],
    caller: number | null,
    room = toolCalls.length,
  ): NewRecord[] {
    return toolCalls.map((tc, i) => {
      const tool = session.tools.find((t) => t.name === tc.name);
      const deadlineAt = callDeadline(tool, caller, this.rt.config.maxToolMs);
      const payload: StartedPayload = {
        tool: tc.name,
        callId: tc.id,
        input: tc.input,
        activation,
        deadline: deadlineAt,
      };
      const base = { tool: tc.name, activationSeq: activation, deadlineAt };
      return i < room ? this.route(session, tool, payload, base) : this.refused(payload, base);
    });
  }

  /**
   * The tool_call_started record of a call an MCP client makes: routed exactly like the model's,
   * with the session's deadline, but outside any activation (`activation: null`) and with an
   * `origin` naming the client, so the Agentloop leaves it out of the conversation.
   */
  planMcp(session: RoutedSession, call: McpCall, caller: number | null, room = 1): NewRecord {
    const tool = session.tools.find((t) => t.name === call.tool);
    const deadlineAt = callDeadline(tool, caller, this.rt.config.maxToolMs);
    const payload: StartedPayload = {
      tool: call.tool,
      callId: call.callId,
      input: call.input,
      activation: null,
      deadline: deadlineAt,
      origin: call.origin,
    };
    const base = { tool: call.tool, activationSeq: null, deadlineAt, origin: "mcp" } as const;
    return room > 0 ? this.route(session, tool, payload, base) : this.refused(payload, base);
  }

  /** A call past its owner's open-calls quota: journaled, run by nobody, ended at once. */
  private refused(payload: StartedPayload, base: CallBase): NewRecord {
    const call = { ...base, hostId: null, connectionId: null, state: "pending", executor: "none" } as const;
    const record: NewRecord = { kind: "tool_call_started", payload, call };
    this.refusals.set(
      record,
      errorOutcome("quota_exceeded", "The application token is at its open-calls quota; the call was not run.", {
        quota: "openCalls",
      }),
    );
    return record;
  }

  /** Who runs a call: a worker, a named host, the session's host (at once when connected here), or nobody. */
  private route(
    session: RoutedSession,
    tool: ToolPlacement | undefined,
    payload: StartedPayload,
    base: CallBase,
  ): NewRecord {
    const brainRuns = tool !== undefined && (tool.env.type !== "host" || Boolean(tool.env.url));
    const named = tool && !brainRuns ? session.namedHosts[tool.env.name] : undefined;
    if (tool?.approval === "always" && (brainRuns || named || session.hostId)) {
      // An approval gate: journaled with its input's hash, dispatched only once approved (a
      // worker's job is committed with the approval then, not now).
      const hostId = brainRuns ? null : (named ?? session.hostId);
      const executor = brainRuns ? "worker" : "host";
      const call = { ...base, hostId, connectionId: null, state: "awaiting", executor } as const;
      return {
        kind: "tool_call_started",
        payload: { ...payload, approval: { inputHash: inputHash(payload.input) } },
        call,
      };
    }
    if (brainRuns) {
      // Brain runs it itself (a component, an HTTP Environment descriptor, a tool the application
      // serves over HTTP): a worker claims it through the job committed with this record.
      const call = { ...base, hostId: null, connectionId: null, state: "pending", executor: "worker" } as const;
      return { kind: "tool_call_started", payload, call };
    }
    if (named) {
      // A named host: pending, and every server holding one of its replicas is told (the
      // commit's host key) and claims its fair share for them.
      const call = { ...base, hostId: named, connectionId: null, state: "pending", executor: "host" } as const;
      return { kind: "tool_call_started", payload, call };
    }
    if (!tool || !session.hostId) {
      const call = { ...base, hostId: null, connectionId: null, state: "pending", executor: "none" } as const;
      return { kind: "tool_call_started", payload, call };
    }
    // Sent at once only to a connection serving the session; otherwise it waits for one.
    const conn = this.rt.hosts.serving(session.hostId, session.id);
    const call = {
      ...base,
      hostId: session.hostId,
      connectionId: conn?.id ?? null,
      state: conn ? "running" : "pending",
      executor: "host",
    } as const;
    return { kind: "tool_call_started", payload, call };
  }

  /** Sends what the commit dispatched, and ends the calls it routed to nobody. */
  async afterCommit(sessionId: string, written: Appended[], records: NewRecord[]): Promise<void> {
    this.sendCommitted(sessionId, written, records);
    await this.refuseUnrouted(sessionId, written, records);
  }

  /**
   * Sends the invoke frames of the calls a commit dispatched to connections of this process. The
   * Agentloop calls it from the append's `committed` hook (WriteOp.committed), so that the frame
   * leaves as soon as the commit is known, ahead of the writer's and the actor's bookkeeping.
   */
  sendCommitted(sessionId: string, written: Appended[], records: NewRecord[]): void {
    written.forEach((w, i) => {
      const r = records[i]!;
      if (r.kind !== "tool_call_started" || r.call?.executor !== "host" || !r.call.connectionId) return;
      const { tool, input } = r.payload;
      const deadline = r.call.deadlineAt;
      this.rt.hosts.byId(r.call.connectionId)?.invoke({ sessionId, sequence: w.seq, tool, input, deadline });
    });
  }

  /**
   * Ends a commit's calls routed to nobody: `unknown_tool` for a tool the session does not have,
   * `quota_exceeded` past the owner's open-calls quota.
   */
  async refuseUnrouted(sessionId: string, written: Appended[], records: NewRecord[]): Promise<void> {
    const unknown: number[] = [];
    const overQuota: number[] = [];
    let quotaOutcome: Outcome | undefined;
    written.forEach((w, i) => {
      const r = records[i]!;
      if (r.kind !== "tool_call_started" || r.call?.executor !== "none") return;
      const refusal = this.refusals.get(r);
      if (refusal) {
        overQuota.push(w.seq);
        quotaOutcome = refusal;
      } else unknown.push(w.seq);
    });
    if (unknown.length > 0) {
      await this.rt.writer.submit(
        endCalls({ sessionId, seqs: unknown }, errorOutcome("unknown_tool", "The session has no tool of that name.")),
      );
    }
    if (quotaOutcome) await this.rt.writer.submit(endCalls({ sessionId, seqs: overQuota }, quotaOutcome));
  }

  /**
   * Claims and sends a host's pending calls on one of its connections: a replica's fair share of
   * its named host's calls, or the calls of the sessions a connection serves (`only`: just these).
   */
  async claimFor(conn: HostLink, only?: string[]): Promise<void> {
    if (!conn.isOpen) return;
    const op = conn.replicaId
      ? claimNamedCalls(conn.hostId, conn.id, { judge: this.rt.liveness.judgement(), citus: this.rt.distributed })
      : claimPendingCalls(conn.hostId, conn.id, only ?? conn.servedSessions());
    const calls = await this.rt.writer.submit(op);
    for (const c of calls) {
      const call = { sessionId: c.sessionId, sequence: c.seq, tool: c.tool, input: c.input, deadline: c.deadline };
      conn.invoke(c.approved ? { ...call, approved: true } : call);
    }
  }
}
