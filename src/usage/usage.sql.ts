/** Columns of one usage row, in the order the inserts take their parameters. */
export const USAGE_COLUMNS = 8;

export const sql = {
  insert: `INSERT INTO usage_events (project_id, key_id, endpoint, model, input_tokens, output_tokens, frames, ms)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  /** n rows in one statement: parameters row by row, USAGE_COLUMNS each. */
  insertMany: (n: number) =>
    `INSERT INTO usage_events (project_id, key_id, endpoint, model, input_tokens, output_tokens, frames, ms) VALUES ${Array.from(
      { length: n },
      (_, r) => `(${Array.from({ length: USAGE_COLUMNS }, (_, c) => `$${r * USAGE_COLUMNS + c + 1}`).join(', ')})`,
    ).join(', ')}`,
  // Daily totals in UTC, oldest first, for days with any traffic in [from, to).
  daily: `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
                 count(*)::int AS requests,
                 coalesce(sum(input_tokens), 0)::bigint AS input_tokens,
                 coalesce(sum(output_tokens), 0)::bigint AS output_tokens,
                 coalesce(sum(frames), 0)::bigint AS frames,
                 coalesce(sum(ms), 0)::bigint AS ms
          FROM usage_events
          WHERE project_id = $1 AND created_at >= $2 AND created_at < $3
          GROUP BY 1 ORDER BY 1`,
  byProject: `SELECT endpoint, model, input_tokens, output_tokens, frames, ms, key_id FROM usage_events
              WHERE project_id = $1 ORDER BY id`,
};
