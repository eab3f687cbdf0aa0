// Projects and keys as a part: the key's own project route (/v1/project) and the admin API (/admin/v1:
// projects, keys, usage). The store they manage (auth/projects.ts) stays a lower layer, because every
// request's authentication reads it; so do its tables, which the first core migration creates together with
// the usage ledger.
import type { Module, ModulePart } from '../base/module.js';
import type { Services } from '../services/services.js';
import { adminRoutes } from './admin.routes.js';
import { projectRoutes } from './project.routes.js';

/** No tables of its own: projects and keys are core tables (see above). */
export const projectsPart: ModulePart = { name: 'projects', migrations: [] };

export function projectsModule(s: Services): Module {
  return { ...projectsPart, routes: [...projectRoutes(s), ...adminRoutes(s)] };
}
