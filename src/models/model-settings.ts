// A model's serving settings as the admin API speaks them (snake_case, null for the server's default) and as
// the server keeps them (a manifest's runtime block, or the override set while running: settings-overrides.ts).
import { errors } from '../base/errors.js';
import { ModelRuntimeSchema, type ModelRuntimeSettings } from '../inference/manifest.js';

/** The admin API's field for each runtime setting. */
const FIELDS = {
  preload: 'preload',
  idle_unload_s: 'idleUnloadS',
  providers: 'providers',
  queue_depth: 'queueDepth',
  devices: 'devices',
  sessions: 'sessions',
  max_batch_size: 'maxBatch',
  max_batch_delay_ms: 'maxBatchDelayMs',
  batch_sizes: 'batchSizes',
  warmup: 'warmup',
} as const satisfies Record<string, keyof ModelRuntimeSettings>;

export type SettingsFields = { -readonly [K in keyof typeof FIELDS]?: unknown };

/**
 * `current` with the fields the body names changed: a value sets one, null drops it (the server's default
 * then applies), a field left out keeps what is in force. Lists are kept as the server reads them (devices
 * each once in the order given, batch sizes each once and rising). Past the bounds a manifest takes, a 400
 * invalid_parameter naming the API's field.
 */
export function applySettings(current: ModelRuntimeSettings | undefined, body: SettingsFields): ModelRuntimeSettings {
  const next: Record<string, unknown> = { ...current };
  for (const [field, key] of Object.entries(FIELDS) as Array<[keyof typeof FIELDS, keyof ModelRuntimeSettings]>) {
    if (!(field in body) || body[field] === undefined) continue;
    const v = body[field];
    if (v === null) delete next[key];
    else if (key === 'devices' && Array.isArray(v)) next[key] = [...new Set(v as number[])];
    else if (key === 'batchSizes' && Array.isArray(v)) next[key] = [...new Set(v as number[])].sort((a, b) => a - b);
    else next[key] = v;
  }
  const r = ModelRuntimeSchema.safeParse(next);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = Object.entries(FIELDS).find(([, key]) => key === issue.path[0])?.[0] ?? String(issue.path[0]);
  throw errors.invalidParam(field, `${field}: ${issue.message}`);
}

/** The settings in force as the admin API shows them (null: the server's default). */
export function settingsOut(r: ModelRuntimeSettings | undefined) {
  return {
    preload: r?.preload ?? false,
    idle_unload_s: r?.idleUnloadS ?? null,
    providers: r?.providers ?? null,
    queue_depth: r?.queueDepth ?? null,
    devices: r?.devices ?? null,
    sessions: r?.sessions ?? null,
    max_batch_size: r?.maxBatch ?? null,
    max_batch_delay_ms: r?.maxBatchDelayMs ?? null,
    batch_sizes: r?.batchSizes ?? null,
    warmup: r?.warmup ?? null,
  };
}
