// Admin API behind SIGHTFLOW_ADMIN_TOKEN (the console and tools rely on these exact routes).
import { z } from 'zod';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Services } from '../services/services.js';
import { errors } from '../base/errors.js';

const Name = z.string().trim().min(1).max(100);
const ProjectOut = z.object({ id: z.string(), name: z.string(), created_at: z.string() }).meta({ id: 'AdminProject' });
const KeyOut = z
  .object({
    id: z.string(),
    name: z.string(),
    hint: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    disabled_at: z.string().nullable(),
    status: z.enum(['active', 'disabled']),
  })
  .meta({ id: 'Key' });
const DateParam = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'Expected an ISO 8601 date such as 2026-01-31');
const UsageQuery = z.strictObject({ from: DateParam.optional(), to: DateParam.optional() });
const DAY = 86_400_000;

export function adminRoutes(s: Services): RouteDef[] {
  const project = async (id: string) => {
    const p = await s.projects.get(id);
    if (!p) throw errors.notFound('project', id);
    return p;
  };
  const keyOut = (k: {
    id: string;
    name: string;
    hint: string;
    created_at: string;
    last_used_at: string | null;
    disabled_at: string | null;
  }) => ({
    id: k.id,
    name: k.name,
    hint: k.hint,
    created_at: k.created_at,
    last_used_at: k.last_used_at,
    disabled_at: k.disabled_at,
    status: k.disabled_at ? ('disabled' as const) : ('active' as const),
  });
  const tags = ['admin'];
  return [
    defineRoute({
      method: 'GET',
      path: '/admin/v1/projects',
      auth: 'admin',
      summary: 'List projects',
      tags,
      noBody: true,
      responses: {
        200: { description: 'Projects', schema: z.object({ object: z.literal('list'), data: z.array(ProjectOut) }) },
      },
      handler: async () => ({ json: { object: 'list', data: await s.projects.list() } }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/v1/projects',
      auth: 'admin',
      summary: 'Create a project',
      tags,
      body: z.strictObject({ name: Name }),
      responses: { 201: { description: 'Created', schema: ProjectOut } },
      handler: async (ctx) => ({ status: 201, json: await s.projects.create(ctx.body.name) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/v1/projects/:id/keys',
      auth: 'admin',
      summary: "List a project's API keys",
      tags,
      noBody: true,
      responses: {
        200: {
          description: 'Keys (hints only)',
          schema: z.object({ object: z.literal('list'), data: z.array(KeyOut) }),
        },
      },
      handler: async (ctx) => {
        const p = await project(ctx.params.id!);
        return { json: { object: 'list', data: (await s.projects.listKeys(p.id)).map(keyOut) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/v1/projects/:id/keys',
      auth: 'admin',
      summary: 'Create an API key (the full key is returned only here)',
      tags,
      body: z.strictObject({ name: Name }),
      responses: { 201: { description: 'Created', schema: KeyOut.extend({ key: z.string() }) } },
      handler: async (ctx) => {
        const p = await project(ctx.params.id!);
        const k = await s.projects.createKey(p.id, ctx.body.name);
        return { status: 201, json: { ...keyOut(k), key: k.key } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/v1/projects/:id/keys/:key_id/disable',
      auth: 'admin',
      summary: 'Disable an API key (effective within 5 s)',
      tags,
      noBody: true,
      responses: { 200: { description: 'Disabled key', schema: KeyOut } },
      handler: async (ctx) => {
        const p = await project(ctx.params.id!);
        const k = await s.projects.disableKey(p.id, ctx.params.key_id!);
        if (!k) throw errors.notFound('key', ctx.params.key_id);
        return { json: keyOut(k) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/v1/projects/:id/usage',
      auth: 'admin',
      summary: 'Daily usage totals (UTC days; default the last 30 days)',
      tags,
      query: UsageQuery,
      noBody: true,
      responses: {
        200: {
          description: 'Daily totals',
          schema: z.object({
            object: z.literal('list'),
            project_id: z.string(),
            from: z.string(),
            to: z.string(),
            data: z.array(
              z.object({
                day: z.string(),
                requests: z.number(),
                input_tokens: z.number(),
                output_tokens: z.number(),
                frames: z.number(),
                ms: z.number(),
              }),
            ),
          }),
        },
      },
      handler: async (ctx) => {
        const p = await project(ctx.params.id!);
        const to = ctx.query.to ? new Date(ctx.query.to) : new Date(Date.now() + DAY);
        const from = ctx.query.from ? new Date(ctx.query.from) : new Date(to.getTime() - 31 * DAY);
        if (from > to) throw errors.invalidParam('from', 'Expected from to be before to');
        return {
          json: {
            object: 'list',
            project_id: p.id,
            from: from.toISOString(),
            to: to.toISOString(),
            data: await s.usage.daily(p.id, from, to),
          },
        };
      },
    }),
  ];
}
