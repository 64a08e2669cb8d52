#!/usr/bin/env node
// Entry point of a server alone (no in-process worker): the only place it reads the environment.
// The server is meant to run with V8's young generation at 64 MiB semi-spaces
// (`--max-semi-space-size=64`; 16 by default): it allocates short-lived objects for every frame,
// write and turn, and with the default a scavenge ran every few milliseconds under load; fewer of
// them cost about a sixth less server CPU per tool call under tool_throughput (BENCHMARKS.md).
// `npm start` passes the flag; other launches pass it on node's command line or in NODE_OPTIONS.
// Not on the `#!` line above: `env -S` is GNU's and BSD's, and where `env` is BusyBox's (Alpine)
// the bin would not start at all.
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
