// Versioned migrations, applied in order, each once, inside one transaction. Never edit a released one:
// add the next version. This file holds the core tables; each part's tables come with its module, and the
// composition root hands the whole list to migrate().

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Core tables are versions 1-99; each part owns a range (video 100-199, vectors 200-299) in its own file.
export const coreMigrations: Migration[] = [
  {
    version: 1,
    name: 'projects, api keys, usage ledger',
    sql: `
      CREATE TABLE projects (
        id          text PRIMARY KEY,
        name        text NOT NULL UNIQUE,
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE api_keys (
        id            text PRIMARY KEY,
        project_id    text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name          text NOT NULL,
        hint          text NOT NULL,
        key_hash      bytea NOT NULL UNIQUE,
        created_at    timestamptz NOT NULL DEFAULT now(),
        last_used_at  timestamptz,
        disabled_at   timestamptz
      );
      CREATE INDEX api_keys_project ON api_keys (project_id, created_at);
      CREATE TABLE usage_events (
        id             bigserial PRIMARY KEY,
        project_id     text NOT NULL,
        key_id         text,
        endpoint       text NOT NULL,
        model          text,
        input_tokens   integer NOT NULL DEFAULT 0,
        output_tokens  integer NOT NULL DEFAULT 0,
        frames         integer NOT NULL DEFAULT 0,
        ms             integer NOT NULL DEFAULT 0,
        created_at     timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX usage_events_project_day ON usage_events (project_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'idempotency keys',
    // One row per (project, Idempotency-Key): claimed before the work (status null), then holding the first
    // response, replayed for 24 hours. `response` is the JSON text as sent, so a replay keeps its key order.
    sql: `
      CREATE TABLE idempotency_keys (
        project_id   text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key          text NOT NULL,
        fingerprint  text NOT NULL,
        claim        text NOT NULL,
        status       integer,
        response     text,
        created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (project_id, key)
      );
      CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
    `,
  },
];

export const sql = {
  createTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  // Serialises concurrent `migrate` runs of several nodes on one PostgreSQL.
  lock: `SELECT pg_advisory_xact_lock(727274)`,
  applied: `SELECT version FROM schema_migrations ORDER BY version`,
  record: `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`,
};
