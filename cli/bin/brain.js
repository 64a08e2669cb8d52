#!/usr/bin/env -S node --max-semi-space-size=64
// The flag is the server's (server/src/main.ts): `brain start` runs one in this process.
// The bin is a committed file rather than dist/main.js itself: npm links bins when it installs,
// and in this repository that happens before the build has written dist/.
import "../dist/main.js";
