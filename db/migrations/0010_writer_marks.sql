-- One row per journal writer (per process): every batch it commits sets `batch` to the batch's own
-- id in the same transaction. When the answer to a COMMIT is lost, the writer reads its row to learn
-- whether that batch committed. (A transaction id cannot tell: after a crash, Postgres hands out
-- again the ids whose WAL never reached disk, so txid_status may describe another transaction.)
CREATE TABLE writer_marks (
  writer_id uuid PRIMARY KEY,
  batch uuid NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
