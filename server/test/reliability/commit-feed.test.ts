// A worker in the server's process (`brain start`) hears of commits through the server's LISTEN
// instead of one of its own: Postgres wakes every listening backend of a database at every
// notifying commit, so a second LISTEN would cost every commit a wake-up for nothing. The server's
// feed must therefore carry everything its LISTEN hears and everything its own writer commits, each
// with the writer it came from (a subscriber skips its own).
import { randomUUID } from "node:crypto";
import { type CommitKeys, channelFor } from "@aexhq/brain-db/commits";
import { appendRecords } from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { bareSession } from "../../../testkit/session-rows.js";
import { until } from "../../../testkit/wait.js";

let brain: InProcessBrain;
beforeAll(async () => {
  brain = await startBrain();
}, 60_000);
afterAll(async () => {
  await brain?.close();
});

it("the server's commit feed carries its own writer's commits and other writers' heard by its LISTEN, with their origins", async () => {
  const rt = brain.app.brain;
  const heard: { origin: string; sessions: string[] }[] = [];
  let reconnects = 0;
  const off = rt.commits.subscribe(
    (keys: CommitKeys, origin) => heard.push({ origin, sessions: [...keys.sessions.keys()] }),
    () => reconnects++,
  );
  // Another process's writer, as a separate worker's would be: heard only through NOTIFY.
  const elsewhere = randomUUID();
  const other = new JournalWriter(brain.db.sql, { channel: channelFor("brain"), origin: elsewhere });
  try {
    const hostId = randomUUID();
    await brain.db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
    const session = randomUUID();
    await other.submit(bareSession(session, hostId, rt.serverId));
    const fromElsewhere = () => heard.find((h) => h.origin === elsewhere && h.sessions.includes(session));
    expect(await until("the other writer's commit, through the LISTEN", fromElsewhere, 15_000)).toBeTruthy();

    await rt.writer.submit(appendRecords(session, [{ kind: "user_message", payload: { text: "hello" } }]));
    // The server's own commit is published before submit resolves (the writer's onCommit).
    expect(heard.find((h) => h.origin === rt.serverId && h.sessions.includes(session))).toBeTruthy();

    // Notifications sent while the LISTEN is down are lost: subscribers are told to look again.
    await brain.db.sql`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'brain-listener'`;
    await until("subscribers told the LISTEN connected again", () => reconnects > 0, 15_000);

    off();
    const count = heard.length;
    await rt.writer.submit(appendRecords(session, [{ kind: "user_message", payload: { text: "again" } }]));
    expect(heard.length).toBe(count);
  } finally {
    off();
    await other.close();
  }
});
