// Test processes load the database driver as the product's processes do: through the edits of
// db/src/driver/patch.ts (a setup file runs before the test file imports anything).
import { installDriverPatch } from "@aexhq/brain-db/driver-patch";

installDriverPatch();
