// The moments room's tables, in the video part's version range: per task, what the index step has written (its
// counts, and the item ids counted).
import type { Migration } from '../../store/migrations.sql.js';

/** Versions 150-151 (video's range, clear of the low numbers other video tables take). */
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
  {
    // The ids each task's index step has counted, so an item written again (after a worker died) counts once.
    version: 151,
    name: 'video index step items counted',
    sql: `
      CREATE TABLE video_index_items (
        task_id  text NOT NULL REFERENCES video_tasks(id) ON DELETE CASCADE,
        item_id  text NOT NULL,
        PRIMARY KEY (task_id, item_id)
      );
    `,
  },
];
