// Video tables (versions 100-199, shared with the video rooms that own tables: analytics 102-103, moments 150):
// tasks (the queue is this table: pending rows are claimed with FOR UPDATE SKIP LOCKED, leases renewed by
// heartbeats), the stream archive (the exact SSE bytes of each task, one row per append, keyed by the byte
// offset where the row starts) and webhook deliveries.
import type { Migration } from '../store/migrations.sql.js';

export const videoMigrations: Migration[] = [
  {
    version: 100,
    name: 'video tasks and stream archive',
    sql: `
      CREATE TABLE video_tasks (
        id                text PRIMARY KEY,
        project_id        text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key_id            text,
        status            text NOT NULL,
        model             text NOT NULL,
        -- The body as validated, with base64 data elided (echoed by include=request).
        request           jsonb NOT NULL,
        -- What the worker hands the provider: the body with a staged input's blob key instead of its data.
        job               jsonb NOT NULL,
        -- Milliseconds, so the keyset cursor (created_at, id) round-trips exactly through JavaScript.
        created_at        timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        started_at        timestamptz,
        finished_at       timestamptz,
        attempts          integer NOT NULL DEFAULT 0,
        max_attempts      integer NOT NULL,
        lease_owner       text,
        lease_expires_at  timestamptz,
        -- Archive size in bytes and number of frame chunks appended (0 = the task can still fail over).
        stream_bytes      bigint NOT NULL DEFAULT 0,
        chunk_count       integer NOT NULL DEFAULT 0,
        progress          jsonb,
        usage             jsonb,
        error             jsonb,
        results           jsonb
      );
      CREATE INDEX video_tasks_project_created ON video_tasks (project_id, created_at DESC, id DESC);
      CREATE INDEX video_tasks_pending ON video_tasks (created_at, id) WHERE status = 'pending';
      CREATE INDEX video_tasks_leased ON video_tasks (lease_expires_at) WHERE lease_owner IS NOT NULL;
      CREATE TABLE video_stream_bytes (
        task_id      text NOT NULL REFERENCES video_tasks(id) ON DELETE CASCADE,
        byte_offset  bigint NOT NULL,
        bytes        bytea NOT NULL,
        PRIMARY KEY (task_id, byte_offset)
      );
    `,
  },
  {
    version: 101,
    name: 'video task webhooks',
    // A task with a webhook keeps its URL and signing secret; webhook_pending marks a task whose terminal
    // state has not been queued for delivery yet. Each delivery (one per terminal state) is a row retried
    // until it is acknowledged or 24 hours have passed, so deliveries survive restarts.
    sql: `
      ALTER TABLE video_tasks ADD COLUMN webhook_url text;
      ALTER TABLE video_tasks ADD COLUMN webhook_secret text;
      ALTER TABLE video_tasks ADD COLUMN webhook_pending boolean NOT NULL DEFAULT false;
      CREATE INDEX video_tasks_webhook_pending ON video_tasks (id) WHERE webhook_pending;
      CREATE TABLE video_webhook_deliveries (
        id                text PRIMARY KEY,
        task_id           text NOT NULL REFERENCES video_tasks(id) ON DELETE CASCADE,
        event             text NOT NULL,
        payload           text NOT NULL,
        status            text NOT NULL DEFAULT 'pending',
        attempts          integer NOT NULL DEFAULT 0,
        next_attempt_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
        last_attempt_at   timestamptz,
        last_status_code  integer,
        last_error        text,
        created_at        timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        delivered_at      timestamptz,
        UNIQUE (task_id, event)
      );
      CREATE INDEX video_webhook_deliveries_due ON video_webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    `,
  },
  {
    version: 104,
    name: 'video task checkpoints',
    // A live task's checkpoint, written by the fenced append of each frame chunk (stream/stream.sql.ts), is
    // what another worker continues from after its worker died (docs/video.md, "When a worker dies"); NULL
    // for tasks that cannot resume. `resumes` counts how often the reaper handed the task on.
    sql: `
      ALTER TABLE video_tasks ADD COLUMN checkpoint jsonb;
      ALTER TABLE video_tasks ADD COLUMN resumes integer NOT NULL DEFAULT 0;
      CREATE INDEX video_tasks_resumable ON video_tasks (created_at, id)
        WHERE lease_owner IS NULL AND status IN ('running', 'streaming');
    `,
  },
  {
    version: 105,
    name: 'video task resume streaks',
    // The resume limit counts takeovers in a row that archived nothing new (a task that kills every worker
    // that takes it), not every takeover: `resumed_at_chunk` is the chunk count at the last takeover and
    // `resume_streak` how many takeovers in a row found no chunk after it.
    sql: `
      ALTER TABLE video_tasks ADD COLUMN resumed_at_chunk integer;
      ALTER TABLE video_tasks ADD COLUMN resume_streak integer NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 106,
    name: 'video task checkpoints as text',
    // The checkpoint is written with every chunk and only ever read whole, by the worker that continues the
    // task: stored as the JSON text it is (no jsonb parse on each append) and out of line without compression
    // (its bulk is deflated state in base64, which the database's compression does not shrink).
    sql: `
      ALTER TABLE video_tasks ALTER COLUMN checkpoint TYPE text USING checkpoint::text;
      ALTER TABLE video_tasks ALTER COLUMN checkpoint SET STORAGE EXTERNAL;
    `,
  },
];
