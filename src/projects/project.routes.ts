// The key's own project: the smallest project-scoped resource (and what a client checks its key with).
import { z } from 'zod';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Services } from '../services.js';
import { errors } from '../errors.js';

export const ProjectSchema = z.object({ id: z.string(), object: z.literal('project'), name: z.string(), created_at: z.string() });

export function projectRoutes(s: Services): RouteDef[] {
  // Projects are never renamed or deleted, so a record read once stays true.
  const cache = new Map<string, Awaited<ReturnType<typeof s.projects.get>>>();
  const show = async (projectId: string, id: string) => {
    // Another project's id answers exactly like an unknown one.
    let p = id === projectId ? cache.get(id) ?? null : null;
    if (!p && id === projectId) {
      p = await s.projects.get(id);
      if (p && cache.size < 10_000) cache.set(id, p);
    }
    if (!p) throw errors.notFound('project', id);
    return { json: { id: p.id, object: 'project', name: p.name, created_at: p.created_at } };
  };
  return [
    defineRoute({
      method: 'GET', path: '/v1/project', auth: 'key', summary: "The API key's project", tags: ['projects'], noBody: true,
      responses: { 200: { description: 'Project', schema: ProjectSchema } },
      handler: async (ctx) => show(ctx.principal.projectId, ctx.principal.projectId),
    }),
    defineRoute({
      method: 'GET', path: '/v1/projects/:id', auth: 'key', summary: 'A project (only the key\'s own; others are 404)', tags: ['projects'], noBody: true,
      responses: { 200: { description: 'Project', schema: ProjectSchema } },
      handler: async (ctx) => show(ctx.principal.projectId, ctx.params.id!),
    }),
  ];
}
