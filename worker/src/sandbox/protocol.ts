import type { MessagePort } from "node:worker_threads";

/**
 * Messages between the worker's main thread and the thread that runs one invocation of a
 * component. One MessagePort carries everything, in order: host calls (answered through the
 * port, with a SharedArrayBuffer to wake the blocked thread), one-way diagnostics, and the final
 * report. Every value is structured-cloneable.
 */

/**
 * What the thread starts with (workerData). It instantiates the component right away and then
 * waits, as a warm spare, for its one invocation.
 */
export interface ThreadInit {
  /** file: URL of the component transpiled by jco (instantiation mode). */
  componentUrl: string;
  /** Its core modules, compiled once in the main thread and shared with every thread. */
  modules: Record<string, WebAssembly.Module>;
  port: MessagePort;
  /** Int32Array[1] over a SharedArrayBuffer: 0 while a host call is pending, 1 once answered. */
  control: SharedArrayBuffer;
}

/** The invocation, posted to the thread (worker.postMessage) when a call is given to it. */
export interface Invoke {
  invocation: { input: string; options: string; deadlineAtMs: number };
  /** A materialised, read-only copy of the session's workspace, or null for no filesystem. */
  workspaceDir: string | null;
}

/** Host calls that need the journal, answered after their write committed. */
export type HostCall =
  | { op: "emit"; kind: string; data: string }
  | { op: "emit-result"; outcome: string }
  | { op: "returned" }
  | { op: "finish"; outcome: string | null }
  | { op: "model"; request: string };

/**
 * The answer to a host call: the committed sequence (and, for `model`, the ModelResult JSON), or
 * an error naming a stable code first.
 */
export type HostReply = { ok: true; seq: number | null; value?: string } | { ok: false; error: string };

/** How `run` ended, as the thread saw it. */
export type RunEnd =
  | { how: "returned" }
  /** `memoryBytes`: the largest linear memory it had then (at its cap: it ran out of memory). */
  | { how: "trap"; message: string; name: string; stack: string | null; memoryBytes: number }
  | { how: "setup_failed"; message: string };

export type ThreadMessage =
  /** The thread's first message: its OS thread id where it can tell (the CPU bound reads it). */
  | { type: "started"; tid: number | null }
  | { type: "call"; call: HostCall }
  | { type: "telemetry"; level: string; message: string }
  | { type: "output"; stream: "stdout" | "stderr"; text: string }
  | { type: "end"; end: RunEnd };

/** Diagnostics are best-effort and bounded: a component cannot flood the worker's log. */
export const MAX_DIAGNOSTIC_CHARS = 4096;
