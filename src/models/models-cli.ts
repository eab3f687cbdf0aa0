// `sightflow models list|prepare|verify [ids...] [--force] [--json]` and `models add|settings|remove`. Returns the
// process exit code. prepare and add show a progress bar on a terminal and one line per step otherwise
// (logs, CI). A CLIP model's id stands for its two encoders. Skipped bring-your-own manifests are reported
// on stderr by every command (and fail verify).
import { ApiError } from '../base/errors.js';
import { ModelRegistry, type PrepareProgress } from '../inference/registry.js';
import { type BatchSizes, parseBatchSizes } from '../inference/dynamic-batch.js';
import { InferenceRuntime } from '../inference/runtime.js';
import {
  addModel,
  removeModel,
  type AddModelDeps,
  type AddProgress,
  type ModelCheck,
  type ModelTask,
} from './model-install.js';
import type { ModelManifest, ModelRuntimeSettings } from '../inference/manifest.js';
import { applySettings, type SettingsFields, settingsOut } from './model-settings.js';
import type { UrlPolicy } from '../media/url-policy.js';

const SETTINGS_FLAGS = `[--preload] [--idle-unload-s N] [--providers cuda,cpu] [--queue-depth N] [--sessions N] [--max-batch N]
                            [--max-batch-delay-ms MS] [--batch-sizes 1,8,32|all] [--warmup on|off] [--devices 0,1]`;
const USAGE = `usage: sightflow models list|prepare|verify [model-id...] [--force] [--json]
       sightflow models add <file.onnx|https-url|owner/repo[@rev]:path> [--id ID] [--task detect] [--labels a,b,...|labels.txt]
                            [--sha256 HEX] ${SETTINGS_FLAGS} [--json]
       sightflow models settings <model-id> ${SETTINGS_FLAGS} [--json]
                            (a setting given as "default" goes back to the server's; none given shows them)
       sightflow models remove <model-id>`;

/** What `models add|remove` need beyond the data dir: the sample check and, on a shared database, publishing. */
export interface ModelsCliContext {
  dataDir: string;
  modelsDir?: string;
  flags?: Record<string, string | true>;
  hubUrl?: string;
  policy?: UrlPolicy;
  /** Runs the added model on the sample image (detection/model-check.ts); `add` needs it. */
  check?: (runtime: InferenceRuntime, registry: ModelRegistry, id: string) => Promise<ModelCheck>;
  /** With a shared database: the model is stored there so every node gets it. */
  publish?: (manifest: ModelManifest, file: string) => Promise<void>;
  unpublish?: (id: string) => Promise<void>;
  /** With a shared database: a model's serving settings are stored there for every node. */
  publishSettings?: (id: string, runtime: ModelRuntimeSettings) => Promise<void>;
}

/** `context`: the data dir alone is enough for list, prepare and verify. */
export async function modelsCli(args: string[], context: ModelsCliContext | string): Promise<number> {
  const ctx: ModelsCliContext = typeof context === 'string' ? { dataDir: context } : context;
  const [cmd, ...rest] = args;
  const json = rest.includes('--json');
  const force = rest.includes('--force');
  const ids = rest.filter((a) => !a.startsWith('--'));
  if (cmd === 'add' || cmd === 'remove' || cmd === 'settings') {
    try {
      return await (cmd === 'add'
        ? addCommand(ids, ctx, json)
        : cmd === 'settings'
          ? settingsCommand(ids, ctx, json)
          : removeCommand(ids, ctx));
    } catch (e) {
      // One line a person can act on (offline, checksum, bad file); exit status 1.
      console.error(`sightflow: ${e instanceof ApiError ? e.message : (e as Error).message}`);
      return 1;
    }
  }
  if (!cmd || !['list', 'prepare', 'verify'].includes(cmd)) {
    console.error(USAGE);
    return 2;
  }
  const registry = await ModelRegistry.open(ctx.dataDir, { modelsDir: ctx.modelsDir });
  for (const p of registry.problems) console.error(`skipped: ${p.message}`);
  const known = registry.list().map((m) => m.manifest.id);
  const families = new Map(registry.clip.map((c) => [c.manifest.id, [c.visionId, c.textId]]));
  const unknown = ids.filter((id) => !known.includes(id) && !families.has(id));
  if (unknown.length) {
    console.error(`unknown model ${unknown.join(', ')}; known: ${[...known, ...families.keys()].join(', ')}`);
    return 2;
  }
  const selected = ids.length ? [...new Set(ids.flatMap((id) => families.get(id) ?? [id]))] : known;

  if (cmd === 'list') {
    const rows = registry
      .list()
      .filter((m) => selected.includes(m.manifest.id))
      .map((m) => ({
        id: m.manifest.id,
        task: m.manifest.task,
        format: m.manifest.format,
        source:
          'package' in m.manifest.source
            ? `${m.manifest.source.package}/${m.manifest.source.path}`
            : m.manifest.source.file,
        prepared: registry.isPrepared(m.manifest.id),
        builtin: m.builtin,
      }));
    if (json) console.log(JSON.stringify(rows));
    else {
      console.log(
        table(
          ['id', 'task', 'format', 'prepared', 'source'],
          rows.map((r) => [r.id, r.task, r.format, r.prepared ? 'yes' : 'no', r.source]),
        ),
      );
      for (const c of registry.clip)
        console.log(
          `embedding model ${c.manifest.id}: clip (${c.visionId} + ${c.textId}, tokenizer ${c.tokenizerPath})`,
        );
      console.log(`models in ${registry.modelsDir}`);
    }
    return 0;
  }

  if (cmd === 'prepare') {
    const bar = progressPrinter(json);
    let failed = 0;
    const results = [];
    for (const id of selected) {
      try {
        const r = await registry.prepare(id, { force, onProgress: bar });
        results.push({ ...r, ok: true });
        if (!json) console.log(`${id}: ${r.action} in ${Math.round(r.ms)} ms -> ${r.path}`);
      } catch (e) {
        failed++;
        results.push({ id, ok: false, error: (e as Error).message });
        console.error(`${id}: FAILED: ${(e as Error).message}`);
      }
    }
    if (json) console.log(JSON.stringify(results));
    return failed ? 1 : 0;
  }

  let failed = registry.problems.length;
  const results = [];
  for (const id of selected) {
    const r = await registry.verify(id);
    results.push(r);
    if (!r.ok) failed++;
    if (!json) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${id}: ${r.detail}`);
  }
  if (json) console.log(JSON.stringify(results));
  return failed ? 1 : 0;
}

async function addCommand(ids: string[], ctx: ModelsCliContext, json: boolean): Promise<number> {
  const source = ids[0];
  if (!source || ids.length > 1) {
    console.error(USAGE);
    return 2;
  }
  const f = ctx.flags ?? {};
  const check = ctx.check;
  if (!check) throw new Error('models add needs the sample check');
  const str = (k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);
  const labelsArg = str('labels');
  let labels: string[] | undefined;
  if (labelsArg !== undefined) {
    const { existsSync, readFileSync } = await import('node:fs');
    labels = existsSync(labelsArg)
      ? readFileSync(labelsArg, 'utf8')
          .split(/\r?\n/)
          .map((l) => l.trim())
          .filter(Boolean)
      : labelsArg
          .split(',')
          .map((l) => l.trim())
          .filter(Boolean);
  }
  const runtimeSettings = applySettings(undefined, settingsFlags(f, false));
  const registry = await ModelRegistry.open(ctx.dataDir, { modelsDir: ctx.modelsDir });
  const quiet = {
    info() {},
    warn(o: object, m: string) {
      console.error(`warning: ${m}`);
    },
  };
  const runtime = new InferenceRuntime({ log: quiet, providers: ['cpu'] });
  try {
    const deps: AddModelDeps = {
      registry,
      runtime,
      hubUrl: ctx.hubUrl ?? 'https://huggingface.co',
      policy: ctx.policy ?? { allowPrivate: false },
      check: (id) => check(runtime, registry, id),
      onProgress: json ? undefined : addProgressPrinter(),
    };
    const added = await addModel(
      {
        source,
        id: str('id'),
        task: str('task') as ModelTask | undefined,
        labels,
        sha256: str('sha256'),
        runtime: runtimeSettings,
      },
      deps,
    );
    if (ctx.publish) await ctx.publish(added.manifest, added.path);
    if (json) {
      console.log(
        JSON.stringify({
          id: added.manifest.id,
          task: added.manifest.task,
          sha256: added.sha256,
          bytes: added.bytes,
          path: added.path,
          resumes: added.resumes,
          check: added.check,
        }),
      );
    } else {
      console.log(`${added.manifest.id}: ${added.check.summary}`);
      console.log(
        `${added.manifest.id}: added (${added.manifest.task}, sha256 ${added.sha256.slice(0, 12)}…, ${added.bytes} bytes) -> ${registry.manifestPathFor(added.manifest.id)}${ctx.publish ? '; stored in the shared database' : ''}`,
      );
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

/**
 * `models settings <id>`: changes a model's serving settings (built in or added) in the data dir, where a
 * server running on it takes them at its next re-read, and on a shared database for every node; with no
 * setting given, shows them.
 */
async function settingsCommand(ids: string[], ctx: ModelsCliContext, json: boolean): Promise<number> {
  if (ids.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const id = ids[0]!;
  const registry = await ModelRegistry.open(ctx.dataDir, { modelsDir: ctx.modelsDir });
  if (!registry.has(id)) throw new Error(`no model ${id} (sightflow models list shows them)`);
  const body = settingsFlags(ctx.flags ?? {}, true);
  let inForce = registry.runtimeOf(id);
  if (Object.keys(body).length > 0) {
    inForce = applySettings(inForce, body);
    await registry.setOverride(id, inForce);
    await ctx.publishSettings?.(id, inForce);
  }
  const shown = settingsOut(inForce);
  if (json) console.log(JSON.stringify({ id, settings: shown }));
  else
    console.log(
      `${id}: ${Object.entries(shown)
        .map(([k, v]) => `${k} ${v === null ? 'default' : Array.isArray(v) ? v.join(',') : v}`)
        .join(', ')}${Object.keys(body).length ? ' (saved)' : ''}`,
    );
  return 0;
}

/**
 * The serving-setting flags as the admin API's fields. With `reset`, a flag given as "default" is null (the
 * server's default); --preload takes true or false there, as a bare flag true.
 */
function settingsFlags(f: Record<string, string | true>, reset: boolean): SettingsFields {
  const out: SettingsFields = {};
  const given = (k: string) => f[k] !== undefined;
  const str = (k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);
  const isDefault = (k: string) => reset && str(k)?.trim().toLowerCase() === 'default';
  const list = (k: string) =>
    str(k)!
      .split(',')
      .map((d) => (/^\s*\d+\s*$/.test(d) ? Number(d) : Number.NaN));
  const put = (flag: string, field: keyof SettingsFields, value: () => unknown) => {
    if (!given(flag)) return;
    out[field] = isDefault(flag) ? null : value();
  };
  put('preload', 'preload', () => f.preload === true || str('preload') === 'true');
  put('idle-unload-s', 'idle_unload_s', () => Number(str('idle-unload-s')));
  put('providers', 'providers', () =>
    str('providers')!
      .split(',')
      .map((p) => p.trim().toLowerCase()),
  );
  put('queue-depth', 'queue_depth', () => Number(str('queue-depth')));
  put('sessions', 'sessions', () => Number(str('sessions')));
  put('max-batch', 'max_batch_size', () => Number(str('max-batch')));
  put('max-batch-delay-ms', 'max_batch_delay_ms', () => Number(str('max-batch-delay-ms')));
  put('batch-sizes', 'batch_sizes', () => batchSizesFlag(str('batch-sizes')!));
  put('warmup', 'warmup', () => str('warmup'));
  put('devices', 'devices', () => list('devices'));
  return out;
}

async function removeCommand(ids: string[], ctx: ModelsCliContext): Promise<number> {
  if (ids.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const registry = await ModelRegistry.open(ctx.dataDir, { modelsDir: ctx.modelsDir });
  const id = ids[0]!;
  if (!registry.has(id) && ctx.unpublish) {
    await ctx.unpublish(id);
    console.log(`${id}: removed from the shared database`);
    return 0;
  }
  await removeModel(registry, id);
  await ctx.unpublish?.(id);
  console.log(`${id}: removed`);
  return 0;
}

/** A bar with bytes on a terminal; otherwise one line per step (and per quarter of a download). */
function addProgressPrinter(): (p: AddProgress) => void {
  const tty = process.stderr.isTTY === true;
  let lastQuarter = -1;
  let lastResume = 0;
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
  return (p) => {
    if (p.phase === 'download') {
      const { bytes, total, resumedFrom } = p.progress;
      const fraction = total ? bytes / total : 0;
      if (tty) {
        const width = 24;
        const filled = Math.round(fraction * width);
        process.stderr.write(
          `\r${p.id.padEnd(16)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${mb(bytes)}${total ? ` / ${mb(total)}` : ''}${resumedFrom ? ' (resumed)' : ''}   `,
        );
        if (total && bytes >= total) process.stderr.write('\n');
        return;
      }
      if (resumedFrom > 0 && resumedFrom !== lastResume) {
        lastResume = resumedFrom;
        process.stderr.write(`${p.id}: download resumed at ${mb(resumedFrom)}\n`);
      }
      const q = Math.floor(fraction * 4);
      if (q !== lastQuarter) {
        lastQuarter = q;
        process.stderr.write(
          `${p.id}: download ${mb(bytes)}${total ? ` / ${mb(total)} (${Math.round(fraction * 100)}%)` : ''}\n`,
        );
      }
      return;
    }
    process.stderr.write(`${p.id}: ${p.phase}${p.detail ? ` (${p.detail})` : ''}\n`);
  };
}

function progressPrinter(quiet: boolean): (p: PrepareProgress) => void {
  const tty = process.stderr.isTTY === true;
  let last = '';
  return (p) => {
    if (quiet) return;
    if (tty) {
      const width = 24;
      const filled = Math.round(p.fraction * width);
      process.stderr.write(
        `\r${p.id.padEnd(16)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.phase.padEnd(8)}`,
      );
      if (p.phase === 'done') process.stderr.write('\n');
    } else if (`${p.id}:${p.phase}` !== last) {
      process.stderr.write(`${p.id}: ${p.phase}${p.detail ? ` (${p.detail})` : ''}\n`);
    }
    last = `${p.id}:${p.phase}`;
  };
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

/** --batch-sizes as the manifest keeps it; a bad list stops the command with the flag's name. */
function batchSizesFlag(text: string): BatchSizes {
  try {
    return parseBatchSizes(text);
  } catch (e) {
    throw new Error(`--batch-sizes: ${(e as Error).message}`);
  }
}
