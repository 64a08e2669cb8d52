// Commands a user types (npm, npx, brain-tools), run as real processes with their output kept.
import { spawn } from "node:child_process";

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` in `cwd` and resolves when it exits, whatever its exit code. */
export function runCommand(command: string, args: string[], cwd: string, timeoutMs = 300_000): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const result: CommandResult = { code: null, stdout: "", stderr: "" };
    child.stdout.on("data", (d) => {
      result.stdout += d;
    });
    child.stderr.on("data", (d) => {
      result.stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} took over ${timeoutMs} ms:\n${result.stdout}${result.stderr}`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      result.code = code;
      resolve(result);
    });
  });
}

/** Like runCommand, but a non-zero exit is an error that carries everything it printed. */
export async function runOk(command: string, args: string[], cwd: string, timeoutMs?: number): Promise<string> {
  const result = await runCommand(command, args, cwd, timeoutMs);
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited ${result.code}:\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}
