// The moments room's table, in the video part's version range: per task, what the index step has written.
import type { Migration } from '../../store/migrations.sql.js';

/** Version 150 (video's range, clear of the low numbers other video tables take). */
export const momentsMigrations: Migration[] = [
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
