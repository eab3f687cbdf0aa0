// Vector tables (versions 200-299).
import type { Migration } from '../store/migrations.sql.js';

export const vectorMigrations: Migration[] = [];
