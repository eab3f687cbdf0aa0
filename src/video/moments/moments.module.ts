// The moments room as a part of the server: its table (in the video part's version range). Its step (the index
// step, step.ts) is listed with the others in steps/step-list.ts; moments are searched through the vectors API.
import type { Module, ModulePart } from '../../base/module.js';
import { momentsMigrations } from './moments.migrations.sql.js';

export const momentsPart: ModulePart = { name: 'moments', migrations: momentsMigrations };

export function momentsModule(): Module {
  return { ...momentsPart, routes: [] };
}
