// A part of the system that plugs into the server: its name, its tables (migrations in its own version
// range), its routes, and what it runs beside them (workers, index managers), started after the database is
// ready and stopped before it closes. The static half (ModulePart) is known before any service exists, so
// the composition root can migrate every part's tables before it builds the parts.
import type { RouteDef } from '../http/route.js';
import type { Migration } from '../store/migrations.sql.js';

export interface ModulePart {
  name: string;
  /** This part's migrations; versions are unique across parts (each part owns a range). */
  migrations: Migration[];
}

export interface Module extends ModulePart {
  routes: RouteDef[];
  start?(): Promise<void>;
  stop?(): Promise<void>;
}
