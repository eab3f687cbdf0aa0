// Pages under /v1 (video tasks, collections) need a project key, not the admin token. The console makes one
// for itself through the admin API (named "console") or takes one the person pastes; it is kept in
// sessionStorage per project and checked against /v1/project before use.
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { projectApi, type ProjectApi } from '../api/project-api';
import { HttpError } from '../api/http';
import { session } from '../api/session';
import { useSession } from '../session-context';
import { Notice, errorMessage } from './notice';

export const CONSOLE_KEY_NAME = 'console';

function hintOf(key: string): string {
  return `${key.slice(0, 6)}...${key.slice(-4)}`;
}

export function ProjectKeyGate(props: {
  projectId: string;
  children: (api: ProjectApi, keyRejected: (e: unknown) => boolean) => ComponentChildren;
}) {
  const { api: admin } = useSession();
  const [key, setKey] = useState<string | null>(() => session.projectKey(props.projectId));
  const [pasted, setPasted] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // One client per key: pages reload their data when it changes, not on every render.
  const api = useMemo(() => (key ? projectApi(key) : null), [key]);

  const adopt = async (candidate: string) => {
    // A key of another project would show that project's data under this one's name.
    const p = await projectApi(candidate).project();
    if (p.id !== props.projectId) throw new Error(`That key belongs to project "${p.name}", not this one.`);
    session.setProjectKey(props.projectId, candidate);
    setKey(candidate);
    setError(null);
  };
  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (e) {
      setError(
        e instanceof HttpError && e.status === 401
          ? 'That key was not accepted (unknown or disabled).'
          : errorMessage(e),
      );
    } finally {
      setBusy(false);
    }
  };
  const forget = (reason: string | null) => {
    session.setProjectKey(props.projectId, null);
    setKey(null);
    setError(reason);
  };
  // Pages call this with their errors: a 401 means the stored key stopped working (disabled), so ask again.
  const keyRejected = (e: unknown) => {
    if (e instanceof HttpError && e.status === 401) {
      forget('The stored project key stopped working (it may have been disabled). Create or paste another one.');
      return true;
    }
    return false;
  };

  if (key && api) {
    return (
      <>
        <p class="key-in-use">
          Calling the API with project key <code>{hintOf(key)}</code>.{' '}
          <button type="button" class="link" onClick={() => forget(null)}>
            Use another key
          </button>
        </p>
        {props.children(api, keyRejected)}
      </>
    );
  }
  return (
    <section class="panel" aria-labelledby="key-gate-title">
      <h2 id="key-gate-title">A project key is needed</h2>
      <p>
        This page calls the public API (<code>/v1</code>) as the project. The console can create a key named “
        {CONSOLE_KEY_NAME}” for itself, or you can paste one. It is kept only in this browser tab.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="row">
        <button
          type="button"
          class="primary"
          disabled={busy}
          onClick={() => run(async () => adopt((await admin.createKey(props.projectId, CONSOLE_KEY_NAME)).key))}
        >
          Create a key for the console
        </button>
      </div>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (pasted.trim()) void run(() => adopt(pasted.trim()));
        }}
      >
        <label for="paste-key">Or paste a key</label>
        <input
          id="paste-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="sk_sf_…"
          value={pasted}
          onInput={(e) => setPasted((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || !pasted.trim()}>
          Use this key
        </button>
      </form>
    </section>
  );
}
