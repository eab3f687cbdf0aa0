// The analytics room's tables, in the video part's version range (102-103): a row per task with an analytics
// step (rules, version, totals, frame size, webhook event filter) and the compact track log.
import type { Migration } from '../../store/migrations.sql.js';

export const analyticsMigrations: Migration[] = [
  {
    version: 102,
    name: 'video task analytics',
    // A task with an analytics step: its rules and their version (PUT changes them on a running task), the
    // totals so far (the worker saves them about once a second and at the end), the source frame size
    // (relative rules of a recount need it) and which analytics events go to the task's webhook.
    sql: `
      CREATE TABLE video_task_analytics (
        task_id         text PRIMARY KEY REFERENCES video_tasks(id) ON DELETE CASCADE,
        parameters      jsonb NOT NULL,
        version         integer NOT NULL,
        summary         jsonb,
        frame_width     integer,
        frame_height    integer,
        webhook_events  jsonb,
        updated_at      timestamptz NOT NULL DEFAULT clock_timestamp()
      );
    `,
  },
  {
    version: 103,
    name: 'video task track log',
    // The analytics step's compact track log (track-log.ts): blocks of the boxes it
    // counted, in binary, so a recount or heatmap of a finished task does not parse every archived chunk;
    // track_log_frames says how many frames the log holds once the task is over (null: read the archive).
    sql: `
      CREATE TABLE video_task_tracks (
        task_id   text NOT NULL REFERENCES video_tasks(id) ON DELETE CASCADE,
        seq       integer NOT NULL,
        frames    integer NOT NULL,
        classes   jsonb NOT NULL,
        bytes     bytea NOT NULL,
        PRIMARY KEY (task_id, seq)
      );
      ALTER TABLE video_task_analytics ADD COLUMN track_log_frames integer;
    `,
  },
];
