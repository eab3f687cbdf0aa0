// Web console at /console: static assets built at setup (console/dist), served without a key. The
// page is public; everything it shows comes from /admin/v1 and /v1, which need the admin token or a key.
import { join } from 'node:path';
import { z } from 'zod';
import type { Module, ModulePart } from '../base/module.js';
import type { Services } from '../services/services.js';
import { defineRoute, type Reply, type RequestContext, type RouteDef } from '../http/route.js';
import { projectRoot } from '../base/paths.js';
import { errors } from '../base/errors.js';
import { resolveConsoleFile } from './static-files.js';
import { notBuiltJson, notBuiltPage } from './not-built-page.js';

export const CONSOLE_DIST_DIR = join(projectRoot, 'console', 'dist');

/** The console is static files: no tables. */
export const consolePart: ModulePart = { name: 'console', migrations: [] };

export function consoleModule(_s: Services, distDir: string = CONSOLE_DIST_DIR): Module {
  return { ...consolePart, routes: consoleRoutes(distDir) };
}

export function consoleRoutes(distDir: string): RouteDef[] {
  const serve = async (ctx: RequestContext, rel: string): Promise<Reply> => {
    const r = await resolveConsoleFile(distDir, rel);
    if (r.kind === 'not_built') {
      const wantsHtml = (ctx.headers['accept'] ?? '').includes('text/html');
      return wantsHtml
        ? {
            status: 503,
            headers: { 'Content-Type': 'text/html; charset=utf-8', 'Retry-After': '60' },
            body: notBuiltPage(),
          }
        : { status: 503, headers: { 'Retry-After': '60' }, json: notBuiltJson() };
    }
    if (r.kind === 'missing') throw errors.routeNotFound(ctx.method, ctx.path);
    return { status: 200, headers: r.headers, file: { path: r.path, start: 0, end: r.size - 1 } };
  };
  const common = {
    method: 'GET' as const,
    auth: 'none' as const,
    tags: ['console'],
    noBody: true,
    responses: {
      200: {
        description: 'A console page (HTML) or asset (JS, CSS, images) of the built console',
        schema: z.string(),
        contentType: 'text/html',
      },
      404: { description: 'No such asset' },
      503: { description: 'The console was not built (console_not_built)' },
    },
  };
  return [
    defineRoute({
      ...common,
      path: '/console',
      summary: 'Web console (the page is public; its data needs the admin token)',
      handler: (ctx) => serve(ctx, ''),
    }),
    defineRoute({
      ...common,
      path: '/console/*',
      summary: 'Web console assets; page paths fall back to index.html',
      handler: (ctx) => serve(ctx, ctx.params['*'] ?? ''),
    }),
  ];
}
