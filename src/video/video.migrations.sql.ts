// Video tables (versions 100-199).
import type { Migration } from '../store/migrations.sql.js';

export const videoMigrations: Migration[] = [];
