import { defineConfig } from "vitest/config";

// Tests import the workspace packages from their dist/ (root `npm test` builds first), and run
// against one real Postgres resolved by testkit/global-setup.ts; each file makes its own database.
export default defineConfig({
  test: {
    include: ["**/test/**/*.test.ts"],
    // *.citus.test.ts need a Citus cluster: vitest.citus.config.ts runs them.
    exclude: ["**/node_modules/**", "**/dist/**", "**/*.citus.test.ts"],
    globalSetup: ["testkit/global-setup.ts"],
    // Tests spawn real servers and Postgres work; hooks start and stop them.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Child processes, not worker threads: tests kill and spawn processes and rely on process exit hooks.
    pool: "forks",
  },
});
