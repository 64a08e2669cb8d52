import { pino } from "pino";

/** The worker's log: pino, like the server's, as JSON lines on stderr (stdout is for the banner). */
export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "brain-worker" } }, pino.destination(2));
}
