// API keys of a project (admin API): list by hint, create (the full key shown once), disable.
import { useState } from 'preact/hooks';
import type { ApiKey, CreatedKey } from '../api/types';
import { useSession } from '../session-context';
import { useLoad } from '../use-load';
import { fmtDateTime } from '../format';
import { ErrorNotice, Loading, Notice, errorMessage } from '../components/notice';
import { ConfirmDialog } from '../components/confirm-dialog';
import { NewKeyPanel } from '../components/new-key-panel';
import { useAdminErrors } from './use-admin-errors';

export function KeysPage(props: { projectId: string }) {
  const { api } = useSession();
  const keys = useLoad(() => api.keys(props.projectId), [api, props.projectId]);
  useAdminErrors(keys.error);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [toDisable, setToDisable] = useState<ApiKey | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // The full key exists only in this component's state: a reload (or "Done") drops it for good.
      setCreated(await api.createKey(props.projectId, name.trim()));
      setName('');
      keys.reload();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const disable = async (k: ApiKey) => {
    setToDisable(null);
    setError(null);
    try {
      await api.disableKey(props.projectId, k.id);
      keys.reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };

  return (
    <>
      <h2>API keys</h2>
      <form class="panel row" onSubmit={create}>
        <label for="key-name">New key name</label>
        <input
          id="key-name"
          required
          maxLength={100}
          placeholder="e.g. ci"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy || !name.trim()}>
          Create key
        </button>
      </form>
      {created && <NewKeyPanel created={created} onDone={() => setCreated(null)} />}
      {error && <Notice kind="error">{error}</Notice>}
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.error != null && <ErrorNotice error={keys.error} what="keys" />}
      {keys.data && keys.data.data.length === 0 && <p>No keys yet.</p>}
      {keys.data && keys.data.data.length > 0 && (
        <table class="data" aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.data.map((k) => (
              <tr key={k.id} data-key-id={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.hint}</code>
                </td>
                <td>{fmtDateTime(k.created_at)}</td>
                <td>{k.last_used_at ? fmtDateTime(k.last_used_at) : 'never'}</td>
                <td>
                  <span class={`badge badge-${k.status}`}>{k.status}</span>
                </td>
                <td>
                  {k.status === 'active' && (
                    <button
                      type="button"
                      class="danger small"
                      onClick={() => setToDisable(k)}
                      aria-label={`Disable key ${k.name} (${k.hint})`}
                    >
                      Disable
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ConfirmDialog
        open={toDisable !== null}
        title="Disable this key?"
        message={
          toDisable
            ? `Key “${toDisable.name}” (${toDisable.hint}) will stop working within seconds, everywhere. This cannot be undone; create a new key to replace it.`
            : ''
        }
        confirmLabel="Disable key"
        danger
        onConfirm={() => toDisable && void disable(toDisable)}
        onCancel={() => setToDisable(null)}
      />
    </>
  );
}
