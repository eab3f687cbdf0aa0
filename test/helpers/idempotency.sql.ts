// Test-only statements on the Idempotency-Key table: ages a project's records, standing in for a day
// passing without waiting one.
export const sql = {
  age: `UPDATE idempotency_keys SET created_at = created_at - $2::bigint * interval '1 millisecond' WHERE project_id = $1`,
};
