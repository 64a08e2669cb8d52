#!/usr/bin/env -S node --max-semi-space-size=64
// Entry point of a server alone (no in-process worker): the only place it reads the environment.
// The flag in the line above gives V8's young generation 64 MiB semi-spaces (16 by default): a
// server allocates short-lived objects for every frame, write and turn, and with the default a
// scavenge ran every few milliseconds under load; fewer of them cost about a sixth less server CPU
// per tool call under tool_throughput (BENCHMARKS.md). `npm start` passes the same flag.
import { parseConfig } from "./config.js";
import { exitOnSignals, runServer } from "./run.js";

const signals = exitOnSignals((m) => process.stderr.write(`brain: ${m}\n`));
try {
  const server = await runServer(parseConfig(process.env));
  signals.started(server.close);
} catch (error) {
  process.stderr.write(`brain: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
