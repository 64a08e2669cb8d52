import { type CancelFrame, errorOutcome, type InvokeFrame } from "./contracts.js";
import { Execution, type FrameChannel, type InterruptStatus } from "./execution.js";
import { type PlacedTool, runtimeOf } from "./tool.js";

/**
 * Routes Brain's commands to handlers: `invoke` by session id and tool name, `cancel` by
 * (session id, sequence). Holds every session's placed tools and every in-flight execution.
 */
export class Dispatcher {
  private readonly routes = new Map<string, Map<string, PlacedTool>>();
  /** In-flight executions by session id, then by the sequence that names the call. */
  private readonly executions = new Map<string, Map<number, Execution>>();

  /** A replica's tools, by name: they serve every session that invokes them. */
  private readonly served = new Map<string, PlacedTool>();

  /** `anySession`: a replica of a named host, which routes by tool name alone (serve()). */
  constructor(
    private readonly channel: FrameChannel,
    private readonly anySession = false,
  ) {}

  /** Routes a session's invocations to its host tools (component tools run in Brain's workers). */
  attach(sessionId: string, tools: readonly PlacedTool[]): void {
    const host = tools.filter((placed) => placed.env.type === "host");
    this.routes.set(sessionId, new Map(host.map((placed) => [placed.name, placed])));
  }

  /** A replica's tools: every invocation of one of these names runs it, whatever the session. */
  serve(tools: readonly PlacedTool[]): void {
    for (const placed of tools) this.served.set(placed.name, placed);
  }

  /** The sessions with handlers attached. */
  sessionIds(): string[] {
    return [...this.routes.keys()];
  }

  /** Drops a session's handlers; its in-flight calls are over too. */
  release(sessionId: string): void {
    this.routes.delete(sessionId);
    for (const execution of [...(this.executions.get(sessionId)?.values() ?? [])]) execution.interrupt("cancelled");
  }

  /** Ends every in-flight call (connection lost or client closed); handlers stay attached. */
  interruptAll(status: InterruptStatus): void {
    for (const calls of [...this.executions.values()]) {
      for (const execution of [...calls.values()]) execution.interrupt(status);
    }
  }

  releaseAll(): void {
    this.interruptAll("unknown");
    this.routes.clear();
  }

  invoke(frame: InvokeFrame): void {
    const { sessionId, sequence, deadline } = frame;
    const calls = this.executions.get(sessionId) ?? new Map<number, Execution>();
    // Brain sends each invocation once; a duplicate would be a server bug, not a second run.
    if (calls.has(sequence)) return;
    const placed = this.anySession ? this.served.get(frame.tool) : this.routes.get(sessionId)?.get(frame.tool);
    if (placed === undefined) {
      if (deadline !== null && Date.now() >= deadline) return;
      const outcome = errorOutcome(
        "unknown_tool",
        `This host has no tool ${JSON.stringify(frame.tool)} for the session.`,
      );
      try {
        this.channel.send({ type: "finish", sessionId, sequence, outcome }).catch(() => {});
      } catch {
        // Not connected any more: Brain records the call as unknown.
      }
      return;
    }
    const execution = new Execution(this.channel, { sessionId, sequence, deadline }, runtimeOf(placed), () => {
      calls.delete(sequence);
      if (calls.size === 0 && this.executions.get(sessionId) === calls) this.executions.delete(sessionId);
    });
    calls.set(sequence, execution);
    this.executions.set(sessionId, calls);
    void execution.start(frame.input, frame.approved === true);
  }

  cancel(frame: CancelFrame): void {
    this.executions.get(frame.sessionId)?.get(frame.sequence)?.interrupt(frame.status);
  }
}
