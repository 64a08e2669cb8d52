/**
 * The thread's side of host calls. Host functions are synchronous for the component, but their
 * journal writes happen on the main thread, asynchronously. So the thread posts the call and
 * sleeps in Atomics.wait until the main thread has committed the write, posted the reply on the
 * same port and flipped the control word; then it takes the reply with receiveMessageOnPort. A
 * MessagePort carries replies of any size with no serialisation of our own; the control word is
 * only the wake-up. The worker can still terminate a thread that waits here.
 */
import { type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import type { HostCall, HostReply, ThreadMessage } from "./protocol.js";

export const PENDING = 0;
export const ANSWERED = 1;

export class Bridge {
  private readonly control: Int32Array;

  constructor(
    private readonly port: MessagePort,
    control: SharedArrayBuffer,
  ) {
    this.control = new Int32Array(control);
  }

  call(call: HostCall): HostReply {
    Atomics.store(this.control, 0, PENDING);
    this.send({ type: "call", call });
    Atomics.wait(this.control, 0, PENDING);
    const reply = receiveMessageOnPort(this.port);
    if (!reply) throw new Error("a host call was woken without a reply");
    return reply.message as HostReply;
  }

  /** One-way: diagnostics and the final report. The port keeps them in order with the calls. */
  send(message: ThreadMessage): void {
    this.port.postMessage(message);
  }
}
