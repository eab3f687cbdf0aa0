// Adding and removing a bring-your-own model on one data directory, for `sightflow models add|remove` and
// the admin API. An added model is two files: its ONNX at the prepared path <models-dir>/<id>/<sha256>.onnx
// (with prepared.json, so nothing is copied again at start) and its manifest <data-dir>/manifests/<id>.json
// (source = that file, sha256 recorded, origin = where it came from, --labels and serving settings if given;
// everything else the detector reads from the file). The manifest is written last, after
// the model loaded and ran on the sample image, so a server watching the folder never sees a broken model.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { errors } from '../base/errors.js';
import type { UrlPolicy } from '../media/url-policy.js';
import { downloadModel, parseModelSource, type DownloadProgress } from './model-download.js';
import {
  ManifestSchema,
  MODEL_ID,
  MODEL_ID_RULE,
  type ModelManifest,
  type ModelRuntimeSettings,
} from '../inference/manifest.js';
import { sha256File, type ModelRegistry } from '../inference/registry.js';
import type { InferenceRuntime } from '../inference/runtime.js';
import type { ModelCheck } from '../detection/model-check.js';

export type { ModelCheck } from '../detection/model-check.js';

export type ModelTask = ModelManifest['task'];

export interface AddModelInput {
  /** A local .onnx path, an http(s) URL or a hub reference owner/repo[@rev]:path. */
  source: string;
  id?: string;
  task?: ModelTask;
  /** Class names in output order (detectors); default: the COCO 80 classes. */
  labels?: string[];
  /** Expected sha256 of the file. */
  sha256?: string;
  description?: string;
  runtime?: ModelRuntimeSettings;
}

export interface AddModelDeps {
  registry: ModelRegistry;
  runtime: InferenceRuntime;
  /** Base URL of the model hub for owner/repo:path references. */
  hubUrl: string;
  policy: UrlPolicy;
  /** Loads the registered model and runs it on the sample image; throws when it cannot. */
  check: (id: string) => Promise<ModelCheck>;
  onProgress?: (p: AddProgress) => void;
  signal?: AbortSignal;
  /** Whether source may name a file on this machine (the CLI: yes; the HTTP API: URLs only). */
  localFiles?: boolean;
}

export type AddProgress =
  | { phase: 'download'; id: string; progress: DownloadProgress }
  | { phase: 'checksum' | 'install' | 'check' | 'done'; id: string; detail?: string };

export interface AddedModel {
  manifest: ModelManifest;
  path: string;
  sha256: string;
  bytes: number;
  /** Resumed connections during the download (0 for a local file). */
  resumes: number;
  check: ModelCheck;
}

/** A model id from a file name: yolov8n_int8.onnx -> yolov8n_int8. */
export function idFromFileName(name: string): string {
  const id = basename(name)
    .replace(/\.onnx$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64);
  return id || 'model';
}

export async function addModel(input: AddModelInput, deps: AddModelDeps): Promise<AddedModel> {
  const { registry } = deps;
  const source = parseModelSource(input.source, deps.hubUrl, (p) => deps.localFiles !== false && existsSync(p));
  const id = input.id ?? idFromFileName(source.kind === 'file' ? source.path : source.fileName);
  if (!MODEL_ID.test(id))
    throw errors.invalidParam(
      'id',
      `Expected id to be 1-64 characters (${MODEL_ID_RULE}) but received ${JSON.stringify(id)}`,
    );
  if (registry.has(id)) throw errors.modelExists(id);
  if (input.sha256 !== undefined && !/^[0-9a-f]{64}$/.test(input.sha256)) {
    throw errors.invalidParam(
      'sha256',
      `Expected sha256 to be 64 lowercase hex digits but received ${JSON.stringify(input.sha256)}`,
    );
  }
  const progress = deps.onProgress ?? (() => {});

  // 1. The bytes: downloaded into <data-dir>/downloads (a part file there survives for the next try), or read in place.
  let file: string;
  let sha: string;
  let resumes = 0;
  let staged = false;
  if (source.kind === 'url') {
    const dir = join(registry.dataDir, 'downloads');
    await mkdir(dir, { recursive: true });
    const dest = join(dir, `${createHash('sha256').update(source.url.href).digest('hex').slice(0, 16)}.onnx`);
    const r = await downloadModel(source.url, dest, {
      ...deps.policy,
      sha256: input.sha256,
      signal: deps.signal,
      onProgress: (p) => progress({ phase: 'download', id, progress: p }),
    });
    file = r.path;
    sha = r.sha256;
    resumes = r.resumes;
    staged = true;
  } else {
    if (!source.path.toLowerCase().endsWith('.onnx'))
      throw errors.invalidParam('source', `Expected an .onnx file but received ${JSON.stringify(source.path)}`);
    progress({ phase: 'checksum', id, detail: source.path });
    file = source.path;
    sha = await sha256File(file);
    if (input.sha256 && sha !== input.sha256) throw errors.modelChecksumMismatch(sha, input.sha256);
  }

  // 2. The file at its prepared path, then the model registered in memory for the check.
  progress({ phase: 'install', id, detail: file });
  const dir = join(registry.modelsDir, id);
  await mkdir(dir, { recursive: true });
  const prepared = join(dir, `${sha}.onnx`);
  const tmp = join(dir, `.add-${process.pid}-${Date.now()}.onnx`);
  try {
    if (staged) await rename(file, tmp);
    else await copyFile(file, tmp);
    await rename(tmp, prepared);
  } finally {
    await rm(tmp, { force: true });
  }
  await writeFile(
    join(dir, 'prepared.json'),
    JSON.stringify({ id, sha256: sha, format: 'onnx', preparedAt: new Date().toISOString() }, null, 2) + '\n',
  );
  const task = input.task ?? 'detect';
  const manifest = ManifestSchema.parse({
    id,
    task,
    format: 'onnx',
    description:
      input.description ?? `added from ${source.kind === 'url' ? (source.ref ?? source.url.href) : source.path}`,
    source: { file: prepared, sha256: sha },
    ...(input.labels?.length ? { labels: input.labels } : {}),
    ...(input.runtime && Object.keys(input.runtime).length ? { runtime: input.runtime } : {}),
    origin: {
      ...(source.kind === 'url' ? { url: source.ref ?? source.url.href } : { file: source.path }),
      addedAt: new Date().toISOString(),
    },
  });
  const manifestPath = registry.manifestPathFor(id);
  registry.put({ manifest, manifestPath, builtin: false });
  // (Until its manifest is written, a reload of the folder must not take the model for removed.)
  registry.hold(id);

  // 3. Load it and run it on the sample image. The manifest stays bare: a detector reads its input size,
  // layout and class names from the file itself.
  let check: ModelCheck;
  try {
    progress({ phase: 'check', id });
    await deps.runtime.register(registry.spec(id)).session();
    check = await deps.check(id);
  } catch (e) {
    await deps.runtime.unregister(id).catch(() => {});
    registry.delete(id);
    registry.settle(id);
    await rm(dir, { recursive: true, force: true });
    throw errors.invalidModel((e as Error).message);
  }

  // 4. The manifest, atomically: a watching server reads it whole or not at all.
  try {
    await writeManifest(manifestPath, manifest);
  } finally {
    registry.settle(id);
  }
  progress({ phase: 'done', id, detail: check.summary });
  return { manifest, path: prepared, sha256: sha, bytes: (await stat(prepared)).size, resumes, check };
}

export async function writeManifest(path: string, manifest: ModelManifest): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n');
  await rename(tmp, path);
}

/** Removes a bring-your-own model's manifest and files; built-in models cannot be removed. */
export async function removeModel(registry: ModelRegistry, id: string): Promise<void> {
  if (!registry.has(id)) throw errors.notFound('model', id);
  const r = registry.get(id);
  if (r.builtin) throw errors.invalidParam('id', `Model ${id} is built in and cannot be removed`);
  await rm(registry.manifestPathFor(id), { force: true });
  registry.delete(id);
  // Settings set for it while it ran go with it: a model added again under the id starts from its own.
  await registry.setOverride(id, null);
  await rm(join(registry.modelsDir, id), { recursive: true, force: true });
}
