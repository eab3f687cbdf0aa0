// Serving settings changed while running (PATCH /admin/v1/models/:id) for any registered model, built in or
// added: <data-dir>/model-settings.json holds one runtime block per model id, which replaces the block of its
// manifest (a built-in's manifest has none). Kept apart from the manifests: a built-in's is the package's,
// and an added model's stays as it was added (removing the model drops its override too).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { withFileLock } from '../base/file-lock.js';
import { ModelRuntimeSchema, type ModelRuntimeSettings } from './manifest.js';

export const SETTINGS_FILE = 'model-settings.json';

const FileSchema = z.record(z.string(), ModelRuntimeSchema);

/** A runtime block as the server keeps it: validated, fields in the schema's order (so two compare as text). */
export function normaliseRuntime(runtime: unknown): ModelRuntimeSettings {
  return ModelRuntimeSchema.parse(runtime);
}

/** Whether two runtime blocks (or none) say the same. */
export function sameRuntime(a: ModelRuntimeSettings | undefined, b: ModelRuntimeSettings | undefined): boolean {
  return (
    JSON.stringify(a === undefined ? null : normaliseRuntime(a)) ===
    JSON.stringify(b === undefined ? null : normaliseRuntime(b))
  );
}

/**
 * The overrides in a data dir; none when the file is absent. An unreadable file is reported (`problem`) and
 * read as none, as a bad bring-your-own manifest is: the server starts on the manifests' settings.
 */
export async function readSettingsOverrides(
  dataDir: string,
): Promise<{ overrides: Map<string, ModelRuntimeSettings>; problem?: string }> {
  const path = join(dataDir, SETTINGS_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { overrides: new Map() };
    return { overrides: new Map(), problem: `${path} could not be read: ${(e as Error).message}` };
  }
  try {
    const parsed = FileSchema.safeParse(JSON.parse(text));
    if (!parsed.success)
      return {
        overrides: new Map(),
        problem: `${path} ignored: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      };
    return { overrides: new Map(Object.entries(parsed.data)) };
  } catch (e) {
    return { overrides: new Map(), problem: `${path} ignored: not valid JSON (${(e as Error).message})` };
  }
}

/** Writes the overrides whole (a temporary file renamed into place, so a reader never sees half of it). */
export async function writeSettingsOverrides(
  dataDir: string,
  overrides: ReadonlyMap<string, ModelRuntimeSettings>,
): Promise<void> {
  const path = join(dataDir, SETTINGS_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  const sorted = Object.fromEntries([...overrides.entries()].sort(([a], [b]) => a.localeCompare(b)));
  await writeFile(tmp, JSON.stringify(sorted, null, 2) + '\n');
  await rename(tmp, path);
}

/**
 * Sets (or, with null, drops) one model's override in a data dir's file: read, changed and written whole under
 * a lock on the file, so a server and the CLI (or two of either) changing models at once each keep their change.
 */
export async function updateSettingsOverride(
  dataDir: string,
  id: string,
  runtime: ModelRuntimeSettings | null,
): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await withFileLock(join(dataDir, SETTINGS_FILE), async () => {
    const { overrides } = await readSettingsOverrides(dataDir);
    if (runtime === null) {
      if (!overrides.has(id)) return;
      overrides.delete(id);
    } else overrides.set(id, runtime);
    await writeSettingsOverrides(dataDir, overrides);
  });
}
