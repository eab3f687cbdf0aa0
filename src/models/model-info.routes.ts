// GET /v1/models/:id: one model and its serving state (loaded, memory, requests, p50 latency), for API keys.
import { defineRoute, type RouteDef } from '../http/route.js';
import type { ModelsAdminService } from './models-admin.service.js';
import { ModelOut } from './schemas.js';

export function modelInfoRoutes(service: ModelsAdminService): RouteDef[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/models/:id', auth: 'key', summary: 'A model and its serving state', tags: ['models'], noBody: true,
      responses: { 200: { description: 'The model', schema: ModelOut }, 404: { description: 'No such model' } },
      handler: async (ctx) => ({ json: service.get(ctx.params.id!) }),
    }),
  ];
}
