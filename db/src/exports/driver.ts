/** @aexhq/brain-db/driver: The patched postgres.js driver: its pinned version and patches (db/driver/). */
export { DRIVER_PATCHES, DRIVER_VERSION, patchedDriverSources } from "../driver/patch.js";
export { applyFilePatch, parseUnifiedDiff } from "../driver/unified-diff.js";
