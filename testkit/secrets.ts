import { randomBytes } from "node:crypto";

/**
 * The secret key every server and worker of one test process shares (BRAIN_SECRET_KEY), so a
 * session created through one process's server can be served by another's worker. Tests that look
 * for leaked secrets also look for this key.
 */
export const TEST_SECRET_KEY = randomBytes(32).toString("hex");
