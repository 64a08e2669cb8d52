import { describe, expect, it } from "vitest";

// `npm run test:unit` and `npm run test:watch` resolve the workspace packages through their
// `@aexhq/source` export condition (vitest.unit.config.ts), so a change needs no build; `npm test`
// runs the same files against the build, as the processes it starts do.
describe("which code the unit layer runs", () => {
  it.each([
    ["@aexhq/brain-contracts", "contracts/src/index.ts", "contracts/dist/index.js"],
    ["@aexhq/brain-db/ops", "db/src/exports/ops.ts", "db/dist/exports/ops.js"],
    ["@aexhq/brain-core/egress", "runtime-core/src/egress/index.ts", "runtime-core/dist/egress/index.js"],
  ])("%s is the source under the unit configuration, the build under the main one", (name, source, built) => {
    expect(import.meta.resolve(name)).toMatch(new RegExp(`${process.env.BRAIN_TEST_SOURCE === "1" ? source : built}$`));
  });
});
