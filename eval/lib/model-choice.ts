// `--model <id>` for the detect evaluation and bench: the model registry that serves the id. An id the
// project's registry knows (SIGHTFLOW_DATA_DIR, its manifests included) is taken from there; one of the real
// exports in eval/byo-dir.ts is registered by a bare manifest in a throwaway data dir, exactly as a user
// would drop it in, so nothing is written into the project's data dir. Returns null when that export is
// missing (the caller has printed the skip and returns).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BYO_MODELS, byoPath, isByoModelId, skipWithoutByoModels } from '../byo-dir.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { ModelRegistry } from '../../src/inference/registry.js';

export interface ChosenModel {
  registry: ModelRegistry;
  id: string;
  cleanup(): void;
}

/** The value of `--name v` or `--name=v` in a suite's args. */
export function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

export async function chooseModel(id: string, opts: { json: boolean }): Promise<ChosenModel | null> {
  const dataDir = process.env.SIGHTFLOW_DATA_DIR ?? './data';
  const modelsDir = process.env.SIGHTFLOW_MODELS_DIR;
  const project = await ModelRegistry.open(dataDir, modelsDir ? { modelsDir } : {});
  if (project.list().some((m) => m.manifest.id === id)) {
    await project.prepare(id);
    return { registry: project, id, cleanup() {} };
  }
  if (!isByoModelId(id)) {
    const detectors = project
      .list()
      .filter((m) => m.manifest.task === 'detect')
      .map((m) => m.manifest.id);
    throw new Error(
      `unknown model ${id}; registered detectors: ${detectors.join(', ')}; bring-your-own test exports: ${Object.keys(BYO_MODELS).join(', ')}`,
    );
  }
  if (skipWithoutByoModels(opts, BYO_MODELS[id])) return null;
  const tmp = mkdtempSync(join(tmpdir(), 'sightflow-eval-model-'));
  await writeByoManifest(tmp, { id, task: 'detect', file: byoPath(BYO_MODELS[id]) });
  const registry = await ModelRegistry.open(tmp);
  await registry.prepare(id);
  return { registry, id, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}
