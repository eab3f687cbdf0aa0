// Vector collections of the project (record shape in docs/vectors.md, "Collections"): list, create, delete.
import { useEffect, useState } from 'preact/hooks';
import type { Collection } from '../api/types';
import { fmtDateTime, fmtNumber } from '../format';
import { href, navigate, onLinkClick } from '../router';
import { ErrorNotice, Loading, Notice, Unavailable, errorMessage, isRouteMissing } from '../components/notice';
import { ConfirmDialog } from '../components/confirm-dialog';
import type { V1PageProps } from './tasks-page';

export function CollectionsPage(props: V1PageProps) {
  const [list, setList] = useState<Collection[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [toDelete, setToDelete] = useState<Collection | null>(null);
  const [busy, setBusy] = useState(false);

  const load = async () => {
    try {
      setList((await props.api.collections()).data);
      setError(null);
    } catch (e) {
      if (!props.keyRejected(e)) setError(e);
    }
  };
  useEffect(() => {
    void load();
  }, [props.api]);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFormError(null);
    try {
      const c = await props.api.createCollection(name.trim(), description.trim() || undefined);
      setName('');
      setDescription('');
      navigate(`${props.basePath}/collections/${encodeURIComponent(c.id)}`);
    } catch (err) {
      if (!props.keyRejected(err)) setFormError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const remove = async (c: Collection) => {
    setToDelete(null);
    try {
      await props.api.deleteCollection(c.id);
      await load();
    } catch (err) {
      if (!props.keyRejected(err)) setFormError(errorMessage(err));
    }
  };

  if (isRouteMissing(error)) return <Unavailable feature="Vector collections" routes="GET /v1/vectors/collections" />;
  return (
    <>
      <h2>Collections</h2>
      <form class="panel row" onSubmit={create}>
        <label for="collection-name">New collection</label>
        <input
          id="collection-name"
          required
          maxLength={100}
          placeholder="Name"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <label for="collection-description" class="visually-hidden">
          Description
        </label>
        <input
          id="collection-description"
          maxLength={500}
          placeholder="Description (optional)"
          value={description}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy || !name.trim()}>
          Create collection
        </button>
      </form>
      {formError && <Notice kind="error">{formError}</Notice>}
      {error != null && <ErrorNotice error={error} what="collections" />}
      {!list && error == null && <Loading what="collections" />}
      {list && list.length === 0 && <p>No collections yet.</p>}
      {list && list.length > 0 && (
        <table class="data" aria-label="Collections">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Items</th>
              <th scope="col">Model</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((c) => {
              const to = `${props.basePath}/collections/${encodeURIComponent(c.id)}`;
              return (
                <tr key={c.id}>
                  <td>
                    <a href={href(to)} onClick={(e) => onLinkClick(e, to)}>
                      {c.name}
                    </a>
                  </td>
                  <td>{c.description ?? ''}</td>
                  <td>{fmtNumber(c.item_count)}</td>
                  <td>{c.model_id}</td>
                  <td>{fmtDateTime(c.created_at)}</td>
                  <td>
                    <button
                      type="button"
                      class="danger small"
                      onClick={() => setToDelete(c)}
                      aria-label={`Delete collection ${c.name}`}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <ConfirmDialog
        open={toDelete !== null}
        title="Delete this collection?"
        message={
          toDelete
            ? `“${toDelete.name}” and its ${toDelete.item_count} item(s), vectors and stored files will be deleted. This cannot be undone.`
            : ''
        }
        confirmLabel="Delete collection"
        danger
        onConfirm={() => toDelete && void remove(toDelete)}
        onCancel={() => setToDelete(null)}
      />
    </>
  );
}
