import { defineConfig } from "vitest/config";

// The unit layer: pure rules (the journal fold, commit keys, deadlines, descriptors, error
// mapping, backoff), no Postgres, no servers, seconds in all. `npm test` runs these too: the main
// configuration's include covers test/unit/.
//
// It runs against source: the workspace packages' `@aexhq/source` export condition points at src/, so
// `npm run test:watch` sees a change at once, with no build (the patched driver excepted: it is
// the build's copy, made once by `npm ci`).
export default defineConfig({
  resolve: { conditions: ["@aexhq/source"] },
  ssr: { resolve: { conditions: ["@aexhq/source"] } },
  test: {
    include: ["**/test/unit/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 10_000,
    env: { BRAIN_TEST_SOURCE: "1" },
    // One module graph for all files: pure tests share nothing mutable, and loading zod, the
    // contracts and the driver once instead of per file is most of the time saved.
    pool: "threads",
    isolate: false,
  },
});
