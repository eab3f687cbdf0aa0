// The admin API's models: GET/POST /admin/v1/models, DELETE /admin/v1/models/:id (the console's Models tab).
import { defineRoute, type RouteDef } from '../http/route.js';
import type { ModelsAdminService } from './models-admin.service.js';
import { AddModelBody, AddedModelOut, DeletedModelOut, ModelListOut } from './schemas.js';

export function modelsAdminRoutes(service: ModelsAdminService): RouteDef[] {
  const tags = ['admin'];
  return [
    defineRoute({
      method: 'GET',
      path: '/admin/v1/models',
      auth: 'admin',
      summary: 'List models (built-in and added) with their serving state',
      tags,
      noBody: true,
      responses: { 200: { description: 'Models', schema: ModelListOut } },
      handler: async () => ({ json: { object: 'list', data: service.list() } }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/v1/models',
      auth: 'admin',
      tags,
      body: AddModelBody,
      summary:
        'Add a model from a URL or hub reference: download (resumed, checksum verified), run on the sample image, serve on every node',
      responses: {
        201: { description: 'Added; check says what it detected on the sample image', schema: AddedModelOut },
        400: {
          description: 'Bad source, download failure, checksum mismatch or a model that does not run (invalid_model)',
        },
        409: { description: 'The id is taken (model_exists)' },
      },
      handler: async (ctx) => ({ status: 201, json: await service.add(ctx.body as AddModelBody, ctx.signal) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/admin/v1/models/:id',
      auth: 'admin',
      summary: 'Remove an added model (on every node)',
      tags,
      noBody: true,
      responses: { 200: { description: 'Removed', schema: DeletedModelOut }, 404: { description: 'No such model' } },
      handler: async (ctx) => ({ json: await service.remove(ctx.params.id!) }),
    }),
  ];
}
