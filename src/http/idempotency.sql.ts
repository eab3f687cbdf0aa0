// Statements of the Idempotency-Key store (idempotency.ts); the table is a core migration (version 2).
// Ages are passed in milliseconds and compared with the database clock, so every node agrees on expiry.
export const sql = {
  /** Frees the key when its record is older than the replay window, or its claim was abandoned (no response). */
  expire: `DELETE FROM idempotency_keys WHERE project_id = $1 AND key = $2
    AND (created_at < clock_timestamp() - $3::bigint * interval '1 millisecond'
      OR (status IS NULL AND created_at < clock_timestamp() - $4::bigint * interval '1 millisecond'))`,
  claim: `INSERT INTO idempotency_keys (project_id, key, fingerprint, claim) VALUES ($1, $2, $3, $4)
    ON CONFLICT (project_id, key) DO NOTHING RETURNING claim`,
  get: `SELECT fingerprint, status, response FROM idempotency_keys WHERE project_id = $1 AND key = $2`,
  complete: `UPDATE idempotency_keys SET status = $4, response = $5 WHERE project_id = $1 AND key = $2 AND claim = $3`,
  release: `DELETE FROM idempotency_keys WHERE project_id = $1 AND key = $2 AND claim = $3 AND status IS NULL`,
  purge: `DELETE FROM idempotency_keys WHERE created_at < clock_timestamp() - $1::bigint * interval '1 millisecond'`,
};
