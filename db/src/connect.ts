import postgres, { type Sql } from "postgres";
import { assertSchemaName } from "./schema-name.js";

export type { Sql } from "postgres";

export interface ConnectOptions {
  schema: string;
  /** Pool size. */
  max?: number;
  /** Shows in pg_stat_activity, so operators can tell Brain's connections apart. */
  applicationName?: string;
}

/**
 * A postgres.js pool whose every connection has Brain's schema on its search_path, so the SQL in
 * this package never names a schema. bigint columns (journal sequences) come back as numbers:
 * they stay far below 2^53.
 */
export function connect(url: string, options: ConnectOptions): Sql {
  const schema = assertSchemaName(options.schema);
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: { search_path: schema, application_name: options.applicationName ?? "brain" },
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
    },
  });
}
