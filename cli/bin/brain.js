#!/usr/bin/env node
// The bin is a committed file rather than dist/main.js itself: npm links bins when it installs,
// and in this repository that happens before the build has written dist/.
import "../dist/main.js";
