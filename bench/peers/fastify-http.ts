// The http bench's peer: the same protected route (/v1/project) with the same key check (our Authenticator
// over the same kind of database) served by Fastify. Prints `port N` and a key, then serves until killed.
import Fastify from 'fastify';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { openServices } from '../../src/app.js';
import { createLogger } from '../../src/base/log.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import { isApiError } from '../../src/base/errors.js';

const config = loadConfig(
  { SIGHTFLOW_LOG_LEVEL: 'warn' },
  { dataDir: mkdtempSync(join(tmpdir(), 'sightflow-bench-fastify-')) },
);
const s = await openServices(config, createLogger('warn'));
const boot = await s.projects.bootstrap();
const auth = new Authenticator(s.projects, config.keyCacheMs);
const cache = new Map<string, unknown>();
const app = Fastify({ logger: false });
app.get('/v1/project', async (req, reply) => {
  try {
    const p = await auth.authenticate(req.headers.authorization);
    let project = cache.get(p.projectId);
    if (!project) {
      const r = await s.projects.get(p.projectId);
      project = { id: r!.id, object: 'project', name: r!.name, created_at: r!.created_at };
      cache.set(p.projectId, project);
    }
    return project;
  } catch (e) {
    if (isApiError(e)) return reply.code(e.status).send(e.toBody());
    throw e;
  }
});
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as { port: number }).port;
process.stdout.write(`port ${port}\nkey ${boot!.key}\n`);
