// A part of the system that plugs into the server: its routes, and what it runs beside them (workers,
// index managers), started after the database is ready and stopped before it closes.
import type { RouteDef } from './http/route.js';

export interface Module {
  routes: RouteDef[];
  start?(): Promise<void>;
  stop?(): Promise<void>;
}
