/** What the bare stack's processes (floor_stack) say to each other and to the runner. */

/**
 * The application_name of each stack server's connections, which `--sample-activity` follows (with
 * Brain's writer lane, `brain-writer`, for the journal's).
 */
export const STACK_APPLICATION = { bare: "bench-stack", brain: "bench-stack-journal" } as const;

export interface StackServerArgs {
  url: string;
  channel: string;
  /** What a commit writes: a row a record (default), or Brain's journal statements (stack-journal.ts). */
  journal?: "bare" | "brain";
}

/** A turn: the user's text, then rounds of tool calls (their counts), then the answer. */
export interface TurnBody {
  text: string;
  rounds: number[];
}

/** WebSocket frames between the bare server and its host: `s` a session, `q` a sequence. */
export type Frame =
  /** `at`: the server's wall clock (clock.ts) when the call's intent left for its commit. */
  | { t: "invoke"; s: string; q: number; input: unknown; at: number }
  | { t: "result"; s: string; q: number; output: unknown }
  | { t: "emit"; s: string; q: number; data: unknown }
  | { t: "ack"; s: string; q: number };

export interface StackHostArgs {
  port: number;
}

export interface StackThroughputArgs {
  sessions: number;
  warmupMs: number;
  durationMs: number;
}

export interface StackThroughputResult {
  calls: number;
  turns: number;
  windowSeconds: number;
}
