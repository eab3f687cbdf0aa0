// The key's own project: the smallest project-scoped resource (and what a client checks its key with).
import { z } from 'zod';
import { defineRoute, type Reply, type RouteDef } from '../http/route.js';
import type { Services } from '../services/services.js';
import { errors } from '../base/errors.js';
import { deepFreeze } from '../base/deep-freeze.js';

export const ProjectSchema = z
  .object({ id: z.string(), object: z.literal('project'), name: z.string(), created_at: z.string() })
  .meta({ id: 'Project' });

type ProjectRow = NonNullable<Awaited<ReturnType<Services['projects']['get']>>>;
const projectJson = (p: ProjectRow) => ({ id: p.id, object: 'project', name: p.name, created_at: p.created_at });

export function projectRoutes(s: Services): RouteDef[] {
  // Projects are never renamed or deleted, so a record read once stays true.
  const cache = new Map<string, ReturnType<typeof projectJson>>();
  // A known project answers at once (no promise: the server writes it before its request callback returns).
  const show = (projectId: string, id: string): Reply | Promise<Reply> => {
    // Another project's id answers exactly like an unknown one.
    if (id !== projectId) throw errors.notFound('project', id);
    const known = cache.get(id);
    if (known) return { json: known };
    return s.projects.get(id).then((p) => {
      if (!p) throw errors.notFound('project', id);
      // Frozen: the same record answers every call, and the HTTP layer keeps its JSON text.
      const json = deepFreeze(projectJson(p));
      if (cache.size < 10_000) cache.set(id, json);
      return { json };
    });
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/project',
      auth: 'key',
      summary: "The API key's project",
      tags: ['projects'],
      noBody: true,
      responses: { 200: { description: 'Project', schema: ProjectSchema } },
      handler: (ctx) => show(ctx.principal.projectId, ctx.principal.projectId),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/projects/:id',
      auth: 'key',
      summary: "A project (only the key's own; others are 404)",
      tags: ['projects'],
      noBody: true,
      responses: { 200: { description: 'Project', schema: ProjectSchema } },
      handler: (ctx) => show(ctx.principal.projectId, ctx.params.id!),
    }),
  ];
}
