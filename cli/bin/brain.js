#!/usr/bin/env node
// The bin is a committed file rather than dist/main.js itself: npm links bins when it installs,
// and in this repository that happens before the build has written dist/. The database driver is
// patched as it loads (db/src/driver/patch.ts), so the CLI is imported only after the patch.
import { installDriverPatch } from "@aexhq/brain-db/driver-patch";

installDriverPatch();
await import("../dist/main.js");
