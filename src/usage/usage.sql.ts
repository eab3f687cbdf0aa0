export const sql = {
  insert: `INSERT INTO usage_events (project_id, key_id, endpoint, model, input_tokens, output_tokens, frames, ms)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  /**
   * Any number of rows in one statement of eight parameters, one array a column (row i is element i of each):
   * the statement's text and plan do not grow with the rows, as those of a VALUES list of eight parameters a
   * row did, so large batches cost the embedded database less (docs/capacity.md, "The embedded database's
   * cost").
   */
  insertColumns: `INSERT INTO usage_events (project_id, key_id, endpoint, model, input_tokens, output_tokens, frames, ms)
                  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[],
                                       $7::int[], $8::int[])`,
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
