import type { Sql } from "@aexhq/brain-db/connect";
import { type RecordPage, readRecordPage } from "@aexhq/brain-db/ops";
import type { FastifyBaseLogger } from "fastify";

/**
 * One page of records: what a reader holds at a time besides its socket's buffer. Bounded in
 * bytes as well as rows, so a journal of large records costs a reader no more than a small one.
 */
const PAGE_ROWS = 500;
const PAGE_BYTES = 256 * 1024;
/** Fewest rows asked for: after a page of large records, the next asks for fewer. */
const MIN_PAGE_ROWS = 8;

/**
 * The pages of one event stream's journal. Rows asked per page shrink after a page cut by bytes,
 * so the database does not size many large rows that will not be sent, and grow back after pages
 * of small ones. The backlog is read from BRAIN_READ_URL's replica (when set) up to where the
 * replica's copy ends, then from the primary: a replica holds a prefix of each journal, so nothing
 * is skipped, and the live tail and every wake-up read what has committed. A replica that fails
 * is left for the primary.
 */
export class JournalPages {
  private rows = PAGE_ROWS;
  private replica: boolean;

  constructor(
    private readonly db: { sql: Sql; readSql: Sql },
    private readonly sessionId: string,
    private readonly log: FastifyBaseLogger,
  ) {
    this.replica = db.readSql !== db.sql;
  }

  /** The records after `after`; `done` once the primary has nothing more now. */
  async next(after: number): Promise<{ rows: RecordPage["rows"]; done: boolean }> {
    for (;;) {
      const fromReplica = this.replica;
      let page: RecordPage;
      try {
        page = await readRecordPage(fromReplica ? this.db.readSql : this.db.sql, this.sessionId, after, {
          rows: this.rows,
          bytes: PAGE_BYTES,
        });
      } catch (error) {
        if (!fromReplica) throw error;
        this.log.warn({ err: error }, "event stream: the read replica failed; reading the primary");
        this.replica = false;
        continue;
      }
      const cutByBytes = page.rows.length < this.rows && page.more;
      this.rows = cutByBytes ? Math.max(MIN_PAGE_ROWS, page.rows.length * 2) : Math.min(PAGE_ROWS, this.rows * 2);
      // Where the replica's copy ends, the primary goes on.
      if (fromReplica && !page.more) this.replica = false;
      return { rows: page.rows, done: !page.more && !fromReplica };
    }
  }
}
