// Tables of the models part (versions 300-399): the shared store of added models (model-store.sql.ts), so
// the nodes of one PostgreSQL database see the same bring-your-own models.
import type { Migration } from '../store/migrations.sql.js';

// The models part owns versions 300-399.
export const modelMigrations: Migration[] = [
  {
    version: 300,
    name: 'added models shared by every node',
    sql: `
      CREATE TABLE added_models (
        id          text PRIMARY KEY,
        manifest    jsonb NOT NULL,
        sha256      text NOT NULL,
        bytes       bigint NOT NULL,
        removed_at  timestamptz,
        updated_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE added_model_chunks (
        sha256  text NOT NULL,
        n       integer NOT NULL,
        data    bytea NOT NULL,
        PRIMARY KEY (sha256, n)
      );
    `,
  },
  {
    version: 301,
    name: 'model serving settings shared by every node',
    sql: `
      CREATE TABLE model_settings (
        id          text PRIMARY KEY,
        runtime     jsonb,
        updated_at  timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];
