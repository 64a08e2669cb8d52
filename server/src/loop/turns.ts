import { KeyedListeners } from "../keyed-listeners.js";

/** What an activation_ended record says, as the waiting request needs it. */
export interface TurnEnd {
  activation: number;
  message: number | null;
  status: "completed" | "cancelled" | "failed";
  text: string;
  /** Why a failed activation failed (an error code of contracts/src/errors.ts). */
  error?: TurnError;
}

export type TurnError = {
  code: string;
  message: string;
  /** model_context_exceeded: the tokens asked and the model's window, when the provider said them. */
  details?: { tokens?: number; window?: number };
};

/**
 * In-process news of ended activations, from the actor that wrote them: a request waiting on its
 * turn in the same process answers without reading the journal back. Requests on other servers
 * learn the same from NOTIFY and a query.
 */
export class TurnNotices extends KeyedListeners<[sequence: number, end: TurnEnd]> {}
