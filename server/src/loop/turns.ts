import type { RecordPayload } from "@aexhq/brain-contracts";
import { KeyedListeners } from "../keyed-listeners.js";

/** What an activation_ended record says, as the waiting request needs it. */
export type TurnEnd = RecordPayload<"activation_ended">;

/** Why a failed activation failed (an error code of contracts/src/errors.ts, and its details). */
export type TurnError = NonNullable<TurnEnd["error"]>;

/**
 * In-process news of ended activations, from the actor that wrote them: a request waiting on its
 * turn in the same process answers without reading the journal back. Requests on other servers
 * learn the same from NOTIFY and a query.
 */
export class TurnNotices extends KeyedListeners<[sequence: number, end: TurnEnd]> {}
