// The analytics room as a part of the server: its tables (in the video part's version range) and its routes
// over the video part's ports. Its step (step.ts) is listed with the others in steps/step-list.ts.
import type { Module, ModulePart } from '../../base/module.js';
import type { Services } from '../../services/services.js';
import { analyticsMigrations } from './analytics.migrations.sql.js';
import { analyticsRoutes } from './analytics.routes.js';
import { AnalyticsService, type AnalyticsPorts } from './analytics.service.js';

export const analyticsPart: ModulePart = { name: 'analytics', migrations: analyticsMigrations };

export function analyticsModule(s: Services, ports: AnalyticsPorts): Module {
  return { ...analyticsPart, routes: analyticsRoutes({ analytics: new AnalyticsService(s, ports) }) };
}
