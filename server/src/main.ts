#!/usr/bin/env -S node --max-semi-space-size=64
// Entry point of a server alone (no in-process worker). The flag in the line above gives V8's
// young generation 64 MiB semi-spaces (16 by default): a server allocates short-lived objects for
// every frame, write and turn, and with the default a scavenge ran every few milliseconds under
// load; fewer of them cost about a sixth less server CPU per tool call under tool_throughput
// (BENCHMARKS.md). `npm start` passes the same flag.
//
// The database driver is patched as it loads (db/src/driver/patch.ts), so everything else is
// imported only after the patch is in place.
import { installDriverPatch } from "@aexhq/brain-db/driver-patch";

installDriverPatch();
await import("./serve.js");
