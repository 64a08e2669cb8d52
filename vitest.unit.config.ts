import { defineConfig } from "vitest/config";

// The unit layer: pure rules (the journal fold, commit keys, deadlines, descriptors, error
// mapping, backoff), no Postgres, no servers, seconds in all. `npm test` runs these too: the main
// configuration's include covers test/unit/.
export default defineConfig({
  test: {
    include: ["**/test/unit/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 10_000,
    // One module graph for all files: pure tests share nothing mutable, and loading zod, the
    // contracts and the driver once instead of per file is most of the time saved.
    pool: "threads",
    isolate: false,
  },
});
