import type { ReservedSql, Sql } from "postgres";
import { DISTRIBUTED } from "./citus-tables.js";
import { MAX_PARAMETERS as PARAMETERS } from "./ops/on-session-shards.js";

/**
 * The function a cluster's journal writes are delegated through (ops/on-session-shards.ts):
 * `on_session_shards(session, statement, parameters)`, distributed by its session argument and
 * co-located with `sessions`, so that Citus sends each call whole to the worker holding that
 * session, in the caller's transaction (`force_delegation`). There it names, in place of each of
 * Brain's distributed tables the statement uses, that table's shard holding the session (those
 * of co-located tables are on the same worker), and runs the statement as plain Postgres.
 */
const SIGNATURE = "on_session_shards(uuid,text,text[])";

function definition(schema: string): string {
  const q = `"${schema}"`;
  const tables = ["sessions", ...DISTRIBUTED].map((t) => `'${t}'`).join(", ");
  const types = Array.from({ length: PARAMETERS }, () => "text").join(",");
  const literals = Array.from({ length: PARAMETERS }, () => "%L").join(",");
  const values = Array.from({ length: PARAMETERS }, (_, i) => `p_parameters[${i + 1}]`).join(", ");
  // Prepared once per worker connection and text (the shards in it), then executed: planned from
  // text each time, a write cost its worker twice as much. A utility EXECUTE takes no parameters
  // from plpgsql's USING, so they go as literals.
  return `CREATE OR REPLACE FUNCTION ${q}.on_session_shards(p_session uuid, p_statement text, p_parameters text[])
RETURNS SETOF record LANGUAGE plpgsql AS $fn$
DECLARE
  statement text := p_statement;
  swapped text := p_statement;
  shard text;
  here boolean := true;
  t text;
  name text;
  rel regclass;
  prepared text;
BEGIN
  FOREACH t IN ARRAY ARRAY[${tables}] LOOP
    name := '${q}."' || t || '"';
    IF position(name IN statement) > 0 THEN
      rel := name::regclass;
      shard := shard_name(rel, get_shard_id_for_distribution_column(rel, p_session));
      -- Not delegated (the shard is not here: Citus ran the call on the coordinator), the
      -- statement runs as written, planned by Citus over the distributed tables.
      IF to_regclass(shard) IS NULL THEN
        here := false;
        EXIT;
      END IF;
      swapped := replace(swapped, name, shard);
    END IF;
  END LOOP;
  IF here THEN
    statement := swapped;
  END IF;
  prepared := 'brain_shard_' || md5(statement);
  IF NOT EXISTS (SELECT FROM pg_prepared_statements p WHERE p.name = prepared) THEN
    EXECUTE format('PREPARE %I(${types}) AS %s', prepared, statement);
  END IF;
  RETURN QUERY EXECUTE format('EXECUTE %I(${literals})', prepared, ${values});
END
$fn$`;
}

/** Whether `schema`'s writes can be delegated: the function is there, distributed by its session. */
export async function delegatesOnCitus(sql: Sql | ReservedSql, schema: string): Promise<boolean> {
  const [row] = await sql<{ on: boolean }[]>`
    SELECT EXISTS (
      SELECT FROM pg_dist_object
      WHERE objid = to_regprocedure(${`"${schema}".${SIGNATURE}`}) AND distribution_argument_index IS NOT NULL
    ) AS on`;
  return row?.on === true;
}

/**
 * Replaces the function's body with this release's, on every node (Citus propagates a distributed
 * function's change): `brain migrate --citus` on a cluster already placed.
 */
export async function refreshDelegation(sql: Sql, schema: string): Promise<void> {
  await sql.unsafe(definition(schema));
}

/**
 * Creates the function and makes every worker hold it, and `write_inputs` (migration 0015), which
 * the writes it runs read their input through. Run by placeOnCitus, under the migration lock,
 * once `sessions` is distributed.
 */
export async function createDelegation(conn: ReservedSql, schema: string): Promise<void> {
  const q = `"${schema}"`;
  await conn.unsafe(definition(schema));
  await conn`SELECT create_distributed_function(${`${q}.write_inputs(jsonb)`})`;
  await conn`SELECT create_distributed_function(${`${q}.${SIGNATURE}`}, 'p_session',
    colocate_with => ${`${q}.sessions`}, force_delegation => true)`;
}
