// The index step's statements: where a task's archive ends (the byte offset the next chunk starts at, a
// moment's stream_offset) and the per-task count of items written (shown in the task record).
import type { Migration } from '../../store/migrations.sql.js';

export const sql = {
  streamEnd: `SELECT stream_bytes FROM video_tasks WHERE id = $1`,
  addCounts: `
    INSERT INTO video_index_counts (task_id, collection_id, segments, tracks) VALUES ($1, $2, $3, $4)
    ON CONFLICT (task_id) DO UPDATE SET segments = video_index_counts.segments + $3, tracks = video_index_counts.tracks + $4,
      updated_at = clock_timestamp()`,
  counts: `SELECT collection_id, segments, tracks FROM video_index_counts WHERE task_id = $1`,
};

/** Version 150 (video's range, clear of the low numbers other video tables take). */
export const indexMigrations: Migration[] = [
  {
    version: 150,
    name: 'video index step counts',
    sql: `
      CREATE TABLE video_index_counts (
        task_id        text PRIMARY KEY REFERENCES video_tasks(id) ON DELETE CASCADE,
        collection_id  text NOT NULL,
        segments       integer NOT NULL DEFAULT 0,
        tracks         integer NOT NULL DEFAULT 0,
        updated_at     timestamptz NOT NULL DEFAULT clock_timestamp()
      );
    `,
  },
];
