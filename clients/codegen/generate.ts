// Writes the SDKs' generated type modules from the server's OpenAPI document:
//   node --import tsx clients/codegen/generate.ts [openapi.json]
// Without a file it starts a throwaway server (the test harness, port 0) and reads its /openapi.json, the
// same document the drift test compares against.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pythonModule, typescriptModule } from './openapi-codegen.js';

const clients = join(fileURLToPath(import.meta.url), '..', '..');
export const GENERATED = {
  typescript: join(clients, 'typescript', 'src', 'generated', 'api.ts'),
  python: join(clients, 'python', 'sightflow', '_generated.py'),
};

async function servedDocument(): Promise<Record<string, unknown>> {
  const { startTestApp } = await import('../../test/helpers/app.js');
  const t = await startTestApp();
  try {
    const r = await fetch(`${t.url}/openapi.json`);
    const doc = (await r.json()) as Record<string, unknown>;
    if (!r.ok || typeof doc.openapi !== 'string')
      throw new Error(`/openapi.json answered ${r.status}: ${JSON.stringify(doc).slice(0, 500)}`);
    return doc;
  } finally {
    await t.close();
  }
}

const file = process.argv[2];
const doc = file ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : await servedDocument();
writeFileSync(GENERATED.typescript, typescriptModule(doc));
writeFileSync(GENERATED.python, pythonModule(doc));
console.log(`wrote ${GENERATED.typescript} and ${GENERATED.python}`);
