import { type ChildProcess, fork } from "node:child_process";
import { track } from "./proc.js";

/**
 * Request/response over the IPC channel of a forked child (the host application, the pg-boss
 * worker). The child can also send marks ("start", "end") that the parent timestamps and uses to
 * sample CPU exactly around the measured part of a command.
 */

export type Request = { id: number; cmd: string; args: unknown };
export type Response = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
export type Mark = { mark: string };

export interface Child {
  pid: number;
  process: ChildProcess;
  call<R>(cmd: string, args?: unknown): Promise<R>;
  /** Called with each mark the child sends, as it arrives. */
  onMark(listener: (mark: string) => void): void;
  output(): string;
  stop(): Promise<void>;
}

export function forkChild(script: string, options: { env?: NodeJS.ProcessEnv; execArgv?: string[] } = {}): Child {
  const child = fork(script, [], {
    env: { ...process.env, ...options.env },
    execArgv: options.execArgv ?? [],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  if (child.pid === undefined) throw new Error(`could not fork ${script}`);
  track(child);
  let output = "";
  const verbose = process.env.BENCH_VERBOSE === "1";
  const capture = (c: Buffer) => {
    output += c;
    if (verbose) process.stderr.write(c);
  };
  child.stdout?.on("data", capture);
  child.stderr?.on("data", capture);
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const markListeners: ((mark: string) => void)[] = [];
  let nextId = 1;
  child.on("message", (message: Response | Mark) => {
    if ("mark" in message) {
      for (const l of markListeners) l(message.mark);
      return;
    }
    const p = pending.get(message.id);
    if (!p) return;
    pending.delete(message.id);
    if (message.ok) p.resolve(message.result);
    else p.reject(new Error(message.error));
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.once("exit", (code, signal) => {
    for (const p of pending.values()) {
      p.reject(new Error(`${script} exited (${code ?? signal}) during a call\n--- output ---\n${output.slice(-4000)}`));
    }
    pending.clear();
  });
  return {
    pid: child.pid,
    process: child,
    call<R>(cmd: string, args: unknown = {}): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, cmd, args } satisfies Request);
      });
    },
    onMark(listener) {
      markListeners.push(listener);
    },
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const kill = setTimeout(() => child.kill("SIGKILL"), 5_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(kill);
    },
  };
}

type Handler = (args: never) => Promise<unknown>;

/** The child side: answers requests with `handlers`; exits when the parent goes away. */
export function serve(handlers: Record<string, Handler>): void {
  process.on("message", (message: Request) => {
    const handler = handlers[message.cmd];
    const reply = (r: Response) => process.send?.(r);
    if (!handler) {
      reply({ id: message.id, ok: false, error: `unknown command ${message.cmd}` });
      return;
    }
    (handler as (args: unknown) => Promise<unknown>)(message.args).then(
      (result) => reply({ id: message.id, ok: true, result }),
      (error: unknown) =>
        reply({
          id: message.id,
          ok: false,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        }),
    );
  });
  process.on("disconnect", () => process.exit(0));
}

/** Child side: tells the parent that the measured part starts or ends now. */
export function mark(label: string): void {
  process.send?.({ mark: label } satisfies Mark);
}
