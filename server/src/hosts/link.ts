/**
 * A host connection as the registry, the dispatcher and the runtime see it: the parts of
 * HostConnection they call. A leaf, so none of them imports the connection (which takes the
 * dispatcher), and no import circle runs through the hosts.
 */

/** An invocation frame's call: what a connection sends for a call dispatched to it. */
export interface Invocation {
  sessionId: string;
  sequence: number;
  tool: string;
  input: unknown;
  deadline: number | null;
  /** A person approved the call at its gate: the host runs it without asking a predicate. */
  approved?: true;
}

export interface HostLink {
  readonly id: string;
  readonly hostId: string;
  /** Set when this is a replica of a named host: its calls are claimed by fair share. */
  readonly replicaId: string | null;
  readonly isOpen: boolean;
  /** Whether a call of this session may be sent here. */
  serves(sessionId: string): boolean;
  /** The sessions a claim may take calls of: null for all of the host's. */
  servedSessions(): string[] | null;
  invoke(call: Invocation): void;
  reconcile(): Promise<void>;
  release(sessionId: string): void;
  close(code?: number, reason?: string): void;
}

/** The answer to a frame asking for something on behalf of an open call (ack `value`). */
export interface ToolRequestAnswer {
  /** The journal record that holds the answer (model_call_ended, environment_operation). */
  sequence: number | null;
  value: unknown;
}
