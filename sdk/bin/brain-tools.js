#!/usr/bin/env node
// The bin is a committed file rather than dist/cli/brain-tools.js itself: npm links bins when it
// installs, and in this repository that happens before the build has written dist/.
import "../dist/cli/brain-tools.js";
