// Vector tables (versions 200-299). The database is the source of truth: every item keeps its float32
// vector here; USearch files under <data-dir>/indexes are per-node accelerators rebuilt or caught up from
// these rows. `change_seq` numbers every write to a collection (an index request or a delete); each item
// row and each deletion row records the change that made it, which is how an index file that is behind
// catches up.
import type { Migration } from '../store/migrations.sql.js';

export const vectorMigrations: Migration[] = [
  {
    version: 200,
    name: 'vector collections, items, deletions',
    sql: `
      CREATE TABLE vector_collections (
        id           text PRIMARY KEY,
        project_id   text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name         text NOT NULL,
        description  text,
        model_id     text NOT NULL,
        dimensions   integer NOT NULL,
        metric       text NOT NULL,
        item_count   integer NOT NULL DEFAULT 0,
        -- Next USearch key (per collection) and the number of the last write.
        next_key     bigint NOT NULL DEFAULT 1,
        change_seq   bigint NOT NULL DEFAULT 0,
        created_at   timestamptz NOT NULL DEFAULT now(),
        UNIQUE (project_id, name)
      );
      CREATE INDEX vector_collections_project ON vector_collections (project_id, created_at);
      CREATE TABLE vector_items (
        id             text PRIMARY KEY,
        collection_id  text NOT NULL REFERENCES vector_collections(id) ON DELETE CASCADE,
        key            bigint NOT NULL,
        change_seq     bigint NOT NULL,
        content_type   text NOT NULL,
        text           text,
        blob_key       text,
        metadata       jsonb NOT NULL DEFAULT '{}'::jsonb,
        vector         bytea NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now(),
        UNIQUE (collection_id, key)
      );
      CREATE INDEX vector_items_change ON vector_items (collection_id, change_seq);
      CREATE TABLE vector_deletions (
        collection_id  text NOT NULL REFERENCES vector_collections(id) ON DELETE CASCADE,
        key            bigint NOT NULL,
        change_seq     bigint NOT NULL,
        PRIMARY KEY (collection_id, key)
      );
      CREATE INDEX vector_deletions_change ON vector_deletions (collection_id, change_seq);
    `,
  },
  {
    version: 201,
    name: 'vector item ids unique per collection (client-given ids)',
    // Clients may name items (upsert by id), so an id is unique within its collection, not across the database.
    sql: `
      ALTER TABLE vector_items DROP CONSTRAINT vector_items_pkey;
      ALTER TABLE vector_items ADD PRIMARY KEY (collection_id, id);
    `,
  },
];
