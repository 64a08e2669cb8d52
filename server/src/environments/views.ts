import { byteLength, type EnvironmentView, MAX_FRAME_BYTES } from "@aexhq/brain-contracts";
import type { EnvironmentRow } from "@aexhq/brain-db/ops";

/** An Environment as ctx.environments shows it: header names, never their values. */
export function environmentView(row: EnvironmentRow): EnvironmentView {
  const setup = row.config.setup;
  return {
    type: "http",
    name: row.name,
    baseUrl: row.config.baseUrl,
    headerNames: [...(row.config.headerNames ?? [])],
    setup: setup ? { method: setup.method as "GET", path: setup.path } : null,
    grants: { model: row.config.grants?.model === true },
    status: row.status,
    setupError: row.setupError,
  };
}

/** Room for the rest of the ack frame (type, id, sequence) around an answer. */
const ACK_OVERHEAD_BYTES = 128;

/** Whether an answer fits in the ack frame that carries it (the SDK refuses larger frames). */
export function fitsAck(value: unknown): boolean {
  return byteLength(JSON.stringify(value) ?? "null") + ACK_OVERHEAD_BYTES <= MAX_FRAME_BYTES;
}
