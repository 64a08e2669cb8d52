// After `tsc -b`: writes postgres.js's ES module build, with Brain's edits (db/src/driver/patch.ts),
// to db/dist/driver/postgres/, the driver db/src/connect.ts loads.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writePatchedDriver } from "../db/dist/driver/patch.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// The package's CommonJS entry is cjs/src/index.js; its ES module build is src/ beside cjs/.
const entry = createRequire(join(root, "db", "package.json")).resolve("postgres");
writePatchedDriver(join(dirname(entry), "..", "..", "src"), join(root, "db", "dist", "driver", "postgres"));
