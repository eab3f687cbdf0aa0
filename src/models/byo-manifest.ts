// Registering a bring-your-own ONNX model: writes the bare manifest <data-dir>/manifests/<id>.json that the
// registry reads at start. A standard export needs nothing more: the detector reads input size, layout and
// class names from the file itself (detection/detector-config.ts). The file stays where it is (the manifest
// names its absolute path) and its checksum is pinned, so a changed file is refused rather than silently run.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ManifestSchema, MODEL_ID, MODEL_ID_RULE, type ModelManifest } from '../inference/manifest.js';
import { sha256File } from '../inference/registry.js';

export interface ByoModel {
  id: string;
  task: ModelManifest['task'];
  /** The ONNX file. */
  file: string;
  description?: string;
  /** Manifest fields beyond the bare ones (labels, preprocess, postprocess, ...), for exports that need them. */
  extra?: Partial<Omit<ModelManifest, 'id' | 'task' | 'format' | 'source'>>;
}

/** The manifest for a local ONNX file, its checksum pinned; validated by the registry's own schema. */
export async function byoManifest(m: ByoModel): Promise<ModelManifest> {
  if (!MODEL_ID.test(m.id)) throw new Error(`model id ${JSON.stringify(m.id)}: expected ${MODEL_ID_RULE}`);
  const file = resolve(m.file);
  return ManifestSchema.parse({
    id: m.id,
    task: m.task,
    format: 'onnx',
    description: m.description ?? '',
    source: { file, sha256: await sha256File(file) },
    ...m.extra,
  });
}

/** Writes <dataDir>/manifests/<id>.json (replacing one of that id); returns its path. */
export async function writeByoManifest(dataDir: string, m: ByoModel): Promise<string> {
  const { id, task, format, description } = await byoManifest(m);
  const file = resolve(m.file);
  const dir = join(dataDir, 'manifests');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${m.id}.json`);
  // Only the fields given: defaults are the schema's to fill on reading.
  await writeFile(
    path,
    JSON.stringify(
      { id, task, format, description, source: { file, sha256: await sha256File(file) }, ...m.extra },
      null,
      2,
    ) + '\n',
  );
  return path;
}
