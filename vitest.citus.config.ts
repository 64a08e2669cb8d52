import { defineConfig } from "vitest/config";

// The Citus leg of the test matrix (scripts/test-matrix.mjs citus): BRAIN_TEST_CITUS=1 makes
// testkit/global-setup.ts start a coordinator and two workers, and each test database a cluster
// of its own, its tables distributed. Files named *.citus.test.ts run only here (they need the
// cluster); beside them, a representative part of the suite (SUITE): turns, tools, approvals, the
// API, named hosts, tokens, Environments, MCP tasks, the console's lists, a worker's component
// calls and retention; the rest as in vitest.config.ts.
// Not here: tests timed on the writer's merging (wake-batching's three commits inside 5 ms, budget
// refusals by the thousand), which a cluster writes one statement a write.
const SUITE = [
  "server/test/turns/send-turns.test.ts",
  "server/test/turns/forks.test.ts",
  "server/test/tools/tool-outcomes.test.ts",
  "server/test/tools/approvals.test.ts",
  "server/test/api/http-api.test.ts",
  "server/test/reliability/parked-takeover.test.ts",
  "server/test/operations/retention.test.ts",
  "db/test/environment-setup.test.ts",
  "server/test/environments/*.test.ts",
  "server/test/mcp/*.test.ts",
  "examples/test/mcp.test.ts",
  "server/test/security/key-rotation.test.ts",
  "db/test/server-heartbeat.test.ts",
  "server/test/observability/console-api.test.ts",
  "server/test/hosts/named-hosts.test.ts",
  "db/test/named-host-shares.test.ts",
  "sdk/test/brain-tokens.test.ts",
  "worker/test/host-functions.test.ts",
  "worker/test/worker-process.test.ts",
];

export default defineConfig({
  test: {
    include: ["**/test/**/*.citus.test.ts", ...SUITE],
    exclude: ["**/node_modules/**", "**/dist/**"],
    globalSetup: ["testkit/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
