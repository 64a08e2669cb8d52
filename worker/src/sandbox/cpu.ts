/**
 * The CPU time of one thread, for the CPU bound of a component call. On Linux a thread learns its
 * own id from /proc/thread-self, and the worker reads that thread's user and system time from
 * /proc/self/task/<tid>/stat: the component's own work, whatever else the process or the machine
 * is doing. Elsewhere there is no such reading (null), and the runner counts the time the thread
 * was not waiting on a host call instead.
 */
import { readFileSync, readlinkSync } from "node:fs";

/** Linux's USER_HZ: /proc reports times in ticks of 10 ms. */
const MS_PER_TICK = 10;

/** The calling thread's id, or null where /proc/thread-self does not exist. */
export function ownThreadId(): number | null {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/** The thread's CPU time so far (user + system), in ms; null once it is gone or unreadable. */
export function threadCpuMs(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * MS_PER_TICK : null;
  } catch {
    return null;
  }
}
