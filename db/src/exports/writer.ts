/** @aexhq/brain-db/writer: The journal writer: every write that appends to the journal or changes a call, in group commits. */
export { asStoredJson } from "../jsonb-order.js";
export { againIfLost, lostToAnother } from "../lost-race.js";
export { isUnavailable, PendingRepairs } from "../repairs.js";
export {
  type FlushInfo,
  JournalWriter,
  type WriteOp,
  type WriterOptions,
  type WrittenRecord,
} from "../writer/index.js";
