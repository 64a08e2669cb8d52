import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

/**
 * A TCP proxy in front of a test's Postgres that can lose a connection at one exact moment of the
 * protocol: right after the server has committed and before its client hears so. That is the
 * crash point no trigger can reach (a deferred trigger runs before the commit), where only the
 * writer's mark tells what happened.
 */
export interface PgProxy extends TcpProxy {
  /**
   * The next commit answer is not delivered: what came before it is, then both sides of that
   * connection are cut. A commit answer is the CommandComplete of a COMMIT, or the ReadyForQuery
   * that ends a pipeline of several statements (its implicit transaction commits at the Sync that
   * ReadyForQuery answers). One shot.
   */
  loseNextCommitAnswer(): void;
  /**
   * The next `count` commit answers are not delivered, nor anything between them: from the
   * first, what the server sends is swallowed while it goes on running what it was sent, and the
   * connection is cut once the last of them has passed. With 2, a batch sent behind another
   * commits while its client has heard of neither. One shot.
   */
  loseCommitAnswers(count: number): void;
  /**
   * Drops every notification (NotificationResponse) the server sends through the proxy, as a
   * transaction-mode pooler loses them: LISTEN succeeds and nothing ever arrives.
   */
  dropNotifications(): void;
  /** How many connections were cut that way. */
  readonly cuts: number;
  /** How many ReadyForQuery messages the server has sent, on all connections: one per Sync. */
  readonly readies: number;
}

// CommandComplete ('C'), length 11, "COMMIT\0".
const COMMIT_COMPLETE = Buffer.from([0x43, 0, 0, 0, 11, ...Buffer.from("COMMIT\0", "latin1")]);

/**
 * Reads a server's messages as they arrive and says where each commit answer starts: a COMMIT's
 * CommandComplete, or a ReadyForQuery after two or more CommandCompletes (a pipeline's Sync).
 */
/** `bytes` (whole messages) without its NotificationResponse ('A') messages. */
function withoutNotifications(bytes: Buffer): Buffer {
  const kept: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const end = at + 1 + bytes.readUInt32BE(at + 1);
    if (bytes[at] !== 0x41) kept.push(bytes.subarray(at, end));
    at = end;
  }
  return Buffer.concat(kept);
}

function commitAnswers(onReady: () => void) {
  let pending = Buffer.alloc(0);
  let completes = 0;
  /** The complete messages of `chunk` (with what was pending) and the offsets of commit answers in them. */
  return (chunk: Buffer): { bytes: Buffer; answers: number[] } => {
    const all = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    const answers: number[] = [];
    let at = 0;
    while (all.length - at >= 5) {
      const end = at + 1 + all.readUInt32BE(at + 1);
      if (end > all.length) break;
      const type = all[at];
      if (type === 0x43) {
        completes++;
        if (end - at === COMMIT_COMPLETE.length && all.subarray(at, end).equals(COMMIT_COMPLETE)) answers.push(at);
      } else if (type === 0x5a) {
        onReady();
        if (completes >= 2) answers.push(at);
        completes = 0;
      }
      at = end;
    }
    pending = Buffer.from(all.subarray(at));
    return { bytes: all.subarray(0, at), answers };
  };
}

export async function startPgProxy(url: string): Promise<PgProxy> {
  let armed = false;
  /** Answers to COMMIT still to swallow in `loseCommitAnswers` mode (0: off). */
  let toSwallow = 0;
  let cuts = 0;
  let readies = 0;
  let silent = false;
  const proxy = await startTcpProxy(url, ({ client, upstream, cut }) => {
    client.on("data", (chunk) => upstream.write(chunk));
    let swallowing = false;
    const read = commitAnswers(() => readies++);
    upstream.on("data", (chunk: Buffer) => {
      const { bytes: whole, answers } = read(chunk);
      // Dropping messages moves the offsets of commit answers: not used together.
      const bytes = silent ? withoutNotifications(whole) : whole;
      if (toSwallow > 0) {
        for (const at of answers) {
          if (!swallowing) {
            swallowing = true;
            if (at > 0) client.write(bytes.subarray(0, at));
          }
          if (--toSwallow === 0) {
            cuts++;
            cut();
            return;
          }
        }
        if (!swallowing) client.write(bytes);
        return;
      }
      const at = armed ? answers[0] : undefined;
      if (at === undefined) {
        if (bytes.length > 0) client.write(bytes);
        return;
      }
      armed = false;
      cuts++;
      if (at > 0) client.write(bytes.subarray(0, at), cut);
      else cut();
    });
  });
  return {
    through: proxy.through,
    close: proxy.close,
    loseNextCommitAnswer() {
      armed = true;
    },
    loseCommitAnswers(count: number) {
      toSwallow = count;
    },
    dropNotifications() {
      silent = true;
    },
    get cuts() {
      return cuts;
    },
    get readies() {
      return readies;
    },
  };
}
