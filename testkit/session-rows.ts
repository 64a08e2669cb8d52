import { createSession } from "@aexhq/brain-db";

/**
 * The write that creates a bare session for db-level tests: a scripted model with no steps, no
 * tools, owned by `ownerId` and served by `hostId` (both rows the test inserted).
 */
export function bareSession(
  id: string,
  hostId: string,
  ownerId: string,
  extra: { workspace?: Record<string, string> } = {},
) {
  return createSession({
    id,
    hostId,
    model: { provider: "scripted", script: [] },
    tools: [],
    metadata: {},
    ownerId,
    created: {},
    ...extra,
  });
}
