#!/usr/bin/env node
// The `brain` command. Every command reads the same environment as the server (cliEnv).
import { approvalsCommand } from "./commands/approvals.js";
import { callsCommand } from "./commands/calls.js";
import { doctorCommand } from "./commands/doctor.js";
import { keysCommand } from "./commands/keys.js";
import { migrateCommand } from "./commands/migrate.js";
import { pruneCommand } from "./commands/prune.js";
import { start, worker } from "./commands/run.js";
import { sessionsCommand } from "./commands/sessions.js";
import { sqlCommand } from "./commands/sql.js";
import { type CliEnv, cliEnv } from "./config.js";
import { EXIT_FAILURE, EXIT_USAGE, UsageError } from "./errors.js";
import { USAGE } from "./usage.js";

type Command = (args: string[], env: CliEnv) => Promise<number | "running">;

const COMMANDS: Record<string, Command> = {
  start: (args) => start(args),
  worker: (args) => worker(args),
  migrate: migrateCommand,
  sessions: sessionsCommand,
  calls: callsCommand,
  approvals: approvalsCommand,
  prune: pruneCommand,
  sql: sqlCommand,
  doctor: doctorCommand,
  keys: keysCommand,
};

async function main(argv: string[]): Promise<number | "running"> {
  const [name, ...args] = argv;
  if (name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(USAGE);
    return 0;
  }
  const command = name ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(name ? `unknown command ${name}` : "no command");
  return command(args, cliEnv(process.env));
}

main(process.argv.slice(2)).then(
  (code) => {
    // Servers and workers keep running until a signal; everything else exits with its code.
    if (code !== "running") process.exitCode = code;
  },
  (error: unknown) => {
    // parseArgs throws TypeErrors with an ERR_PARSE_ARGS_* code for unknown or malformed options.
    const code = (error as { code?: string }).code ?? "";
    if (error instanceof UsageError || code.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`brain: ${(error as Error).message}\n\n${USAGE}`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    // Failures are one line (CliError, a database's or server's message); no stack for operators.
    process.stderr.write(`brain: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = EXIT_FAILURE;
  },
);
