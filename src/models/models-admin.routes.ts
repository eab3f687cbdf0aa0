// The admin API's models: GET/POST /admin/v1/models, PATCH and DELETE /admin/v1/models/:id, and loading or
// unloading one on this node (POST .../:id/load, .../:id/unload); the console's Models tab.
import { defineRoute, type RouteDef } from '../http/route.js';
import type { ModelsAdminService } from './models-admin.service.js';
import { AddModelBody, AddedModelOut, DeletedModelOut, ModelListOut, ModelOut, ModelSettingsPatch } from './schemas.js';

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
      method: 'PATCH',
      path: '/admin/v1/models/:id',
      auth: 'admin',
      tags,
      body: ModelSettingsPatch,
      summary:
        "Change a model's serving settings while it runs (built in or added; on every node): the fields given change, null puts one back to the server's default; queue_depth, max_batch_delay_ms, idle_unload_s and preload alone (and sessions on a GPU provider) apply to the running model in place; any other field makes its sessions load again with them",
      responses: {
        200: { description: 'The model with its settings in force', schema: ModelOut },
        400: { description: 'A setting out of its bounds or unknown (invalid_parameter, invalid_request)' },
        404: { description: 'No such model' },
      },
      handler: async (ctx) => ({ json: await service.update(ctx.params.id!, ctx.body as ModelSettingsPatch) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/v1/models/:id/load',
      auth: 'admin',
      tags,
      noBody: true,
      summary:
        'Load a model on this node now (its first session; on a GPU warmed up), rather than at its first run; answers once it is loaded',
      responses: {
        200: { description: 'The model, loaded', schema: ModelOut },
        400: { description: 'The model did not load (invalid_model, with the reason)' },
        404: { description: 'No such model' },
        503: {
          description:
            'Not prepared yet (not_ready), or SIGHTFLOW_GPU_REQUIRED and it could not start on its GPU (gpu_unavailable)',
        },
      },
      handler: async (ctx) => ({ json: await service.load(ctx.params.id!) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/v1/models/:id/unload',
      auth: 'admin',
      tags,
      noBody: true,
      summary:
        "Unload a model on this node: its sessions and their memory (on a GPU, the card's) go once the runs queued or running on them finish (at most 60 s); its next run loads it again",
      responses: {
        200: { description: 'The model, unloaded (loaded again if runs came meanwhile)', schema: ModelOut },
        404: { description: 'No such model' },
      },
      handler: async (ctx) => ({ json: await service.unload(ctx.params.id!) }),
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
