/**
 * Decodes one component's WIT world with jco, in a thread of its own: jco's work on a component
 * of tens of MiB is seconds of synchronous CPU, which on the server's event loop would stall every
 * tenant's requests, host sockets and Agentloops.
 */
import { parentPort, workerData } from "node:worker_threads";
import { componentWit } from "@bytecodealliance/jco";

export type WitAnswer = { ok: true; wit: string } | { ok: false; message: string };

const bytes = workerData as Uint8Array;
let answer: WitAnswer;
try {
  answer = { ok: true, wit: await componentWit(bytes) };
} catch (error) {
  answer = { ok: false, message: (error as Error).message };
}
parentPort?.postMessage(answer);
