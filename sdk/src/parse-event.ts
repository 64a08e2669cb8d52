import { BrainError, type JournalEvent, JournalEventSchema } from "./contracts.js";

/** One line of the NDJSON event stream as a JournalEvent, or the error saying why it is not one. */
export function readEvent(line: string): JournalEvent | BrainError {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return new BrainError("request_failed", "The event stream carried a line that is not JSON.");
  }
  const event = JournalEventSchema.safeParse(json);
  if (!event.success)
    return new BrainError("request_failed", "The event stream carried a malformed event.", event.error.issues);
  return event.data;
}

export function parseEvent(line: string): JournalEvent {
  const event = readEvent(line);
  if (event instanceof BrainError) throw event;
  return event;
}
