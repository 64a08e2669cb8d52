// After `tsc -b`: writes postgres.js's ES module build with db/driver/'s patches applied to
// db/dist/driver/postgres/, the driver db/src/connect.ts loads. Fails on any other driver version.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writePatchedDriver } from "../db/dist/driver/patch.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// The package's CommonJS entry is cjs/src/index.js; the package root is two levels above it.
const entry = createRequire(join(root, "db", "package.json")).resolve("postgres");
writePatchedDriver(
  join(dirname(entry), "..", ".."),
  join(root, "db", "driver"),
  join(root, "db", "dist", "driver", "postgres"),
);
