#!/usr/bin/env node
// Entry point of `npm run worker`. The database driver is patched as it loads
// (db/src/driver/patch.ts), so everything else is imported only after the patch is in place.
import { installDriverPatch } from "@aexhq/brain-db/driver-patch";

installDriverPatch();
await import("./serve.js");
