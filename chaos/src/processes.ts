// The run's child processes (servers, workers, hosts), each restartable under one name. Every exit
// the run did not cause is recorded with its code and last output lines: a process that should be
// alive and is not is a violation, and the reason is usually in those lines.
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";

export interface UnexpectedExit {
  name: string;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Seconds since the run started. */
  at: number;
  /** The last line that names an error (an uncaught exception, the server's own "brain: ..."). */
  error: string;
  tail: string[];
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export class Managed {
  private child: ChildProcess | undefined;
  private killing = false;
  private tail: string[] = [];
  private lastError = "";
  private exited: Promise<void> = Promise.resolve();
  restarts = 0;

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly args: () => string[],
    private readonly env: () => Record<string, string>,
    private readonly ready: RegExp,
    private readonly runDir: string,
    private readonly onUnexpectedExit: (exit: UnexpectedExit) => void,
  ) {}

  get pid(): number | undefined {
    return this.alive ? this.child?.pid : undefined;
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns it and resolves with the ready line's match (rejects if it exits or is slow). */
  async start(timeoutMs = 30_000): Promise<RegExpMatchArray> {
    const child = spawn(process.execPath, [this.script, ...this.args()], {
      env: { ...process.env, ...this.env() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.killing = false;
    this.lastError = "";
    running.add(child);
    const log = join(this.runDir, `${this.name}.log`);
    appendFileSync(log, `\n--- ${new Date().toISOString()} pid ${child.pid} ---\n`);
    // An exit before the ready line is a failed start (start() rejects; the supervisor retries):
    // e.g. a server that cannot reach Postgres while it restarts. Only a running process that
    // exits by itself is a violation.
    let ready = false;
    let buffer = "";
    let onLine: ((line: string) => void) | undefined;
    const take = (chunk: Buffer) => {
      appendFileSync(log, chunk);
      buffer += chunk.toString("utf8");
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        this.tail.push(line);
        if (/^(\w*Error\b|brain(-worker)?: )/.test(line)) this.lastError = line.trim();
        if (this.tail.length > 40) this.tail.shift();
        onLine?.(line);
      }
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
    this.exited = new Promise((done) =>
      child.once("exit", (code, signal) => {
        running.delete(child);
        if (!this.killing && ready) {
          this.onUnexpectedExit({
            name: this.name,
            pid: child.pid ?? 0,
            code,
            signal,
            at: 0,
            error: this.lastError,
            tail: [...this.tail],
          });
        }
        done();
      }),
    );
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(`no ready line in ${timeoutMs} ms`), timeoutMs);
      const fail = (why: string) => {
        clearTimeout(timer);
        onLine = undefined;
        // A start that timed out is abandoned for good: the supervisor starts a fresh one.
        if (this.child === child && this.alive) {
          this.killing = true;
          child.kill("SIGKILL");
        }
        const last = this.tail.filter((l) => l.trim()).pop() ?? "";
        reject(new Error(`${this.name}: ${why}: ${last.trim()}\n${this.tail.join("\n")}`));
      };
      onLine = (line) => {
        const match = line.match(this.ready);
        if (!match) return;
        clearTimeout(timer);
        onLine = undefined;
        ready = true;
        resolve(match);
      };
      child.once("exit", () => fail("exited before it was ready"));
    });
  }

  /** Kills it with `signal` (SIGKILL: a crash) and waits for the exit; expected, so not recorded. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (!this.alive) return;
    this.killing = true;
    this.child?.kill(signal);
    await this.exited;
  }

  async restart(): Promise<RegExpMatchArray> {
    await this.kill();
    this.restarts++;
    return this.start();
  }

  /** SIGTERM (graceful), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    const escalate = setTimeout(() => this.child?.kill("SIGKILL"), 10_000);
    await this.kill("SIGTERM");
    clearTimeout(escalate);
  }
}
