// GET /v1/files/<key>?expires=&sig=: presigned blob links. The signature is the credential (no API key),
// Range requests are honoured so video players can seek.
import { defineRoute, type RouteDef } from '../http/route.js';
import { errors } from '../base/errors.js';
import type { Services } from '../services/services.js';
import { resolveFileRequest } from './file-serving.js';

export function fileRoutes(s: Services): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/files/*',
      auth: 'none',
      noBody: true,
      tags: ['files'],
      summary: 'Download a stored file through a presigned link (expires, sig); supports Range',
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        206: { description: 'The requested byte range', contentType: 'application/octet-stream' },
        403: { description: 'Missing, tampered or expired signature' },
        416: { description: 'Range not satisfiable (range_not_satisfiable, Content-Range: bytes */size)' },
      },
      handler: async (ctx) => {
        const r = await resolveFileRequest(s.blobs, {
          key: ctx.params['*']!,
          query: ctx.rawQuery,
          rangeHeader: ctx.headers['range'],
          secret: s.signingSecret,
        });
        // An error like any other (the one JSON shape), with the Content-Range a client needs to retry.
        if (r.status === 416) throw errors.rangeNotSatisfiable(r.size);
        return { status: r.status, headers: r.headers, file: { path: r.path, start: r.start, end: r.end } };
      },
    }),
  ];
}
