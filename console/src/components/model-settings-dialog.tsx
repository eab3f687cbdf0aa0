// A model's serving settings in a modal form: sessions, dynamic batching, batch sizes, warm-up and queue depth.
// An empty field is the server's default (sent as null); the server keeps them on every node; the running model
// takes a queue depth or batch delay (and on a GPU a session count) in place, and any other change loads its
// sessions again at its next run.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Model, ModelSettings, ModelSettingsPatch } from '../api/types';
import { errorMessage } from './notice';

export interface ModelSettingsProps {
  model: Model | null;
  onSave(id: string, body: ModelSettingsPatch): Promise<void>;
  onClose(): void;
}

type Form = Record<'sessions' | 'max_batch_size' | 'max_batch_delay_ms' | 'batch_sizes' | 'queue_depth', string> & {
  warmup: '' | 'auto' | 'on' | 'off';
};

function formOf(s: ModelSettings): Form {
  const text = (v: number | null) => (v === null ? '' : String(v));
  return {
    sessions: text(s.sessions),
    max_batch_size: text(s.max_batch_size),
    max_batch_delay_ms: text(s.max_batch_delay_ms),
    batch_sizes: s.batch_sizes === null ? '' : Array.isArray(s.batch_sizes) ? s.batch_sizes.join(',') : s.batch_sizes,
    queue_depth: text(s.queue_depth),
    warmup: s.warmup ?? '',
  };
}

/** The form as the API takes it, or the first field that is not what it must be. */
function bodyOf(f: Form): { body: ModelSettingsPatch } | { error: string } {
  const num = (v: string) => (v.trim() === '' ? null : Number(v));
  const body: ModelSettingsPatch = {
    sessions: num(f.sessions),
    max_batch_size: num(f.max_batch_size),
    max_batch_delay_ms: num(f.max_batch_delay_ms),
    queue_depth: num(f.queue_depth),
    warmup: f.warmup === '' ? null : f.warmup,
  };
  for (const [k, v] of Object.entries(body))
    if (typeof v === 'number' && !Number.isFinite(v)) return { error: `${k.replace(/_/g, ' ')}: not a number` };
  const sizes = f.batch_sizes.trim().toLowerCase();
  if (sizes === '') body.batch_sizes = null;
  else if (sizes === 'auto' || sizes === 'all') body.batch_sizes = sizes;
  else if (/^\d+(\s*,\s*\d+)*$/.test(sizes)) body.batch_sizes = sizes.split(',').map((x) => Number(x.trim()));
  else return { error: 'batch sizes: auto, all, or whole numbers separated by commas (1,8,32)' };
  return { body };
}

export function ModelSettingsDialog(p: ModelSettingsProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (p.model) {
      setForm(formOf(p.model.settings));
      setError(null);
      if (!d.open) d.showModal();
    } else if (d.open) d.close();
  }, [p.model]);

  const field = (k: keyof Form, label: string, hint: string, numeric = true) => (
    <div class="row">
      <label for={`ms-${k}`}>{label}</label>
      <input
        id={`ms-${k}`}
        type="text"
        inputMode={numeric ? 'decimal' : 'text'}
        placeholder={hint}
        value={form?.[k] ?? ''}
        onInput={(e) => setForm((f) => f && { ...f, [k]: (e.target as HTMLInputElement).value })}
      />
    </div>
  );

  const save = async (e: Event) => {
    e.preventDefault();
    if (!p.model || !form) return;
    const made = bodyOf(form);
    if ('error' in made) {
      setError(made.error);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await p.onSave(p.model.id, made.body);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby="model-settings-title"
      onCancel={(e) => {
        e.preventDefault();
        p.onClose();
      }}
    >
      <form onSubmit={save} aria-label="Serving settings">
        <h2 id="model-settings-title">Serving settings of {p.model?.id}</h2>
        <p>
          Empty fields take the server's default. Queue depth and batch delay (and sessions on a GPU) apply to the
          running model at once; any other change loads its sessions again at its next run.
        </p>
        {field('sessions', 'Sessions', 'server default')}
        {field('max_batch_size', 'Most inputs a call', 'server default')}
        {field('max_batch_delay_ms', 'Longest wait for company (ms)', 'server default')}
        {field('batch_sizes', 'Batch sizes', 'auto, all or 1,8,32', false)}
        <div class="row">
          <label for="ms-warmup">Warm-up at load</label>
          <select
            id="ms-warmup"
            value={form?.warmup ?? ''}
            onChange={(e) =>
              setForm((f) => f && { ...f, warmup: (e.target as HTMLSelectElement).value as Form['warmup'] })
            }
          >
            <option value="">server default</option>
            <option value="auto">auto (on a GPU)</option>
            <option value="on">on</option>
            <option value="off">off</option>
          </select>
        </div>
        {field('queue_depth', 'Queue depth', 'server default')}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="button" onClick={p.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save settings'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
