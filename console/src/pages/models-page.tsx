// Models: every model with its serving state, a form to add one from a URL or hub reference (the server
// downloads it, runs it on the sample image and serves it on every node), each model's serving settings
// (sessions, batching, warm-up) changed while it runs, and removal of added models; above them the node's GPUs.
import { useState } from 'preact/hooks';
import { useSession } from '../session-context';
import { useLoad } from '../use-load';
import { fmtDateTime } from '../format';
import { ErrorNotice, Loading, Notice, errorMessage } from '../components/notice';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ModelSettingsDialog } from '../components/model-settings-dialog';
import { GpuCards } from '../components/gpu-cards';
import { useAdminErrors } from './use-admin-errors';
import type { Model, ModelSettingsPatch } from '../api/types';

const mb = (n: number | null) => (n === null ? '' : `${Math.round(n / 1048576)} MB`);

/** Sessions loaded of the most, and the batching in force: "1/2 sessions, up to 8 a call". */
function servingText(m: Model): string {
  const s = m.serving;
  const parts: string[] = [];
  // The binding is every server's default: only the native engine is worth a word.
  const g = s.engine?.cuda_graphs;
  if (s.engine?.kind === 'native') parts.push(`native engine${g ? (g.on ? ', CUDA graphs' : ', no CUDA graphs') : ''}`);
  if (s.sessions) parts.push(`${s.sessions.loaded}/${s.sessions.max} sessions`);
  if (s.batch && s.batch.max_size > 1)
    parts.push(`up to ${s.batch.max_size} a call${s.batch.sizes ? ` (sizes ${s.batch.sizes.join(', ')})` : ''}`);
  return parts.join(', ');
}

/** The serving settings set for the model (the rest are the server's): "set: 2 sessions, up to 4 a call". */
function settingsText(m: Model): string {
  const s = m.settings;
  const parts: string[] = [];
  if (s.sessions !== null) parts.push(`${s.sessions} sessions`);
  if (s.max_batch_size !== null) parts.push(`up to ${s.max_batch_size} a call`);
  if (s.max_batch_delay_ms !== null) parts.push(`wait ${s.max_batch_delay_ms} ms`);
  if (s.batch_sizes !== null)
    parts.push(`sizes ${Array.isArray(s.batch_sizes) ? s.batch_sizes.join(', ') : s.batch_sizes}`);
  if (s.warmup !== null) parts.push(`warm-up ${s.warmup}`);
  if (s.queue_depth !== null) parts.push(`queue ${s.queue_depth}`);
  return parts.length ? `set: ${parts.join(', ')}` : '';
}

export function ModelsPage() {
  const { api } = useSession();
  const models = useLoad(() => api.models(), [api]);
  useAdminErrors(models.error);
  const [source, setSource] = useState('');
  const [id, setId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [added, setAdded] = useState<string | null>(null);
  const [toRemove, setToRemove] = useState<Model | null>(null);
  const [editing, setEditing] = useState<Model | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const saveSettings = async (modelId: string, body: ModelSettingsPatch) => {
    const before = editing?.serving;
    const after = (await api.updateModel(modelId, body)).serving;
    setEditing(null);
    // The same sessions loaded before and after: the running model took them in place.
    const inPlace = before?.state === 'loaded' && after.state === 'loaded' && after.loaded_at === before.loaded_at;
    setSaved(
      inPlace
        ? `Settings of ${modelId} saved; the running model took them in place.`
        : `Settings of ${modelId} saved; its sessions load again with them at its next run.`,
    );
    models.reload();
  };

  /** Models being loaded or unloaded on request (their button waits). */
  const [switching, setSwitching] = useState<string | null>(null);
  const loadOrUnload = async (m: Model) => {
    setSwitching(m.id);
    setError(null);
    try {
      if (m.serving.state === 'loaded') await api.unloadModel(m.id);
      else await api.loadModel(m.id);
      models.reload();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setSwitching(null);
    }
  };

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setAdded(null);
    try {
      const m = await api.addModel({ source: source.trim(), ...(id.trim() ? { id: id.trim() } : {}) });
      setAdded(`${m.id}: ${m.check.summary}`);
      setSource('');
      setId('');
      models.reload();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const remove = async (m: Model) => {
    setToRemove(null);
    setError(null);
    try {
      await api.removeModel(m.id);
      models.reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };

  return (
    <>
      <h1>Models</h1>
      <GpuCards api={api} />
      <form class="panel row" onSubmit={add} aria-label="Add a model">
        <label for="model-source">Model URL</label>
        <input
          id="model-source"
          required
          placeholder="https://.../model.onnx or owner/repo:path/model.onnx"
          size={48}
          value={source}
          onInput={(e) => setSource((e.target as HTMLInputElement).value)}
        />
        <label for="model-id">Id</label>
        <input
          id="model-id"
          placeholder="from the file name"
          maxLength={64}
          value={id}
          onInput={(e) => setId((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy || !source.trim()}>
          {busy ? 'Adding…' : 'Add model'}
        </button>
      </form>
      {busy && <Loading what="the model (download and a test run on the sample image)" />}
      {added && (
        <Notice kind="info" title="Model added">
          {added}
        </Notice>
      )}
      {saved && (
        <Notice kind="info" title="Settings saved">
          {saved}
        </Notice>
      )}
      {error && (
        <Notice kind="error" title="The model could not be added or removed">
          {error}
        </Notice>
      )}
      {models.loading && !models.data && <Loading what="models" />}
      {models.error != null && <ErrorNotice error={models.error} what="models" />}
      {models.data && (
        <table class="data" aria-label="Models">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Task</th>
              <th scope="col">State</th>
              <th scope="col">Requests</th>
              <th scope="col">p50</th>
              <th scope="col">Memory</th>
              <th scope="col">Serving</th>
              <th scope="col">Source</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {models.data.data.map((m) => (
              <tr key={m.id}>
                <td>
                  <code>{m.id}</code>
                </td>
                <td>{m.task}</td>
                <td>
                  {m.serving.state}
                  {m.serving.providers ? ` (${m.serving.providers[0]})` : ''}
                </td>
                <td>{m.serving.requests}</td>
                <td>{m.serving.p50_ms === null ? '' : `${m.serving.p50_ms} ms`}</td>
                <td>{mb(m.serving.memory_bytes)}</td>
                <td>
                  {servingText(m)}
                  {settingsText(m) && <div class="muted">{settingsText(m)}</div>}
                </td>
                <td>{m.builtin ? 'built in' : m.origin}</td>
                <td>{m.added_at ? fmtDateTime(m.added_at) : ''}</td>
                <td>
                  <button type="button" onClick={() => setEditing(m)} aria-label={`Settings of ${m.id}`}>
                    Settings
                  </button>{' '}
                  <button
                    type="button"
                    disabled={switching === m.id}
                    onClick={() => void loadOrUnload(m)}
                    aria-label={`${m.serving.state === 'loaded' ? 'Unload' : 'Load'} ${m.id}`}
                  >
                    {switching === m.id ? '...' : m.serving.state === 'loaded' ? 'Unload' : 'Load'}
                  </button>{' '}
                  {!m.builtin && (
                    <button type="button" class="danger" onClick={() => setToRemove(m)} aria-label={`Remove ${m.id}`}>
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ModelSettingsDialog model={editing} onSave={saveSettings} onClose={() => setEditing(null)} />
      <ConfirmDialog
        open={toRemove !== null}
        title="Remove this model?"
        message={
          toRemove ? `Model ${toRemove.id} stops being served on every node within seconds; its files are deleted.` : ''
        }
        confirmLabel="Remove model"
        danger
        onConfirm={() => toRemove && void remove(toRemove)}
        onCancel={() => setToRemove(null)}
      />
    </>
  );
}
