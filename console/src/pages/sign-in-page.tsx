// Sign-in with the admin token (SIGHTFLOW_ADMIN_TOKEN, or the one `sightflow serve` generated into <data-dir>/admin-token). The token is tried against /admin/v1 before it is
// kept, so a wrong one never shows a page of data.
import { useState } from 'preact/hooks';
import { adminApi } from '../api/admin-api';
import { HttpError } from '../api/http';
import { Notice, errorMessage } from '../components/notice';

export function SignInPage(props: { reason: string | null; onSignedIn(token: string): void }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) return;
    setBusy(true);
    setError(null);
    try {
      await adminApi(t).projects();
      props.onSignedIn(t);
    } catch (err) {
      if (err instanceof HttpError && err.status === 401)
        setError(
          'That admin token was not accepted. Use the token printed at the first start (kept in <data-dir>/admin-token) or the value of SIGHTFLOW_ADMIN_TOKEN.',
        );
      else if (err instanceof HttpError && err.status === 404)
        setError(
          'The admin API is turned off on this server: start it with `sightflow serve` (which keeps a token in <data-dir>/admin-token) or with SIGHTFLOW_ADMIN_TOKEN set.',
        );
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>sightflow console</h1>
      <form class="panel" onSubmit={submit} aria-describedby="sign-in-help">
        <h2>Sign in</h2>
        <p id="sign-in-help">
          Use the server's admin token: the one printed at its first start (kept in{' '}
          <code>&lt;data-dir&gt;/admin-token</code>), or <code>SIGHTFLOW_ADMIN_TOKEN</code>. It stays in this browser
          tab only.
        </p>
        {props.reason && <Notice kind="warning">{props.reason}</Notice>}
        {error && (
          <Notice kind="error" title="Sign-in failed">
            {error}
          </Notice>
        )}
        <label for="admin-token">Admin token</label>
        <input
          id="admin-token"
          name="admin-token"
          type="password"
          autocomplete="current-password"
          required
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
