// What a server alone runs (main.ts loads it once the driver patch is in place): the only place it
// reads the environment.
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
