// The console shell: sign-in gate, header, and the page for the current path.
import { useMemo, useState } from 'preact/hooks';
import { adminApi } from './api/admin-api';
import { session } from './api/session';
import { SessionContext, type AdminSession } from './session-context';
import { href, navigate, onLinkClick, usePath } from './router';
import { SignInPage } from './pages/sign-in-page';
import { ProjectsPage } from './pages/projects-page';
import { ProjectLayout } from './pages/project-layout';
import { ModelsPage } from './pages/models-page';
import { Notice } from './components/notice';

export function App() {
  const [token, setToken] = useState<string | null>(() => session.adminToken());
  const [signOutReason, setSignOutReason] = useState<string | null>(null);
  const path = usePath();

  const ctx = useMemo<AdminSession | null>(
    () =>
      token
        ? {
            api: adminApi(token),
            signOut(reason?: string) {
              session.signOut();
              setToken(null);
              setSignOutReason(reason ?? null);
            },
          }
        : null,
    [token],
  );

  if (!ctx) {
    return (
      <SignInPage
        reason={signOutReason}
        onSignedIn={(t) => {
          session.setAdminToken(t);
          setSignOutReason(null);
          setToken(t);
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={ctx}>
      <header class="top">
        <a class="brand" href={href('/')} onClick={(e) => onLinkClick(e, '/')}>
          sightflow <span>console</span>
        </a>
        <nav aria-label="Main">
          <a href={href('/')} onClick={(e) => onLinkClick(e, '/')} aria-current={path === '/' ? 'page' : undefined}>
            Projects
          </a>
          <a
            href={href('/models')}
            onClick={(e) => onLinkClick(e, '/models')}
            aria-current={path === '/models' ? 'page' : undefined}
          >
            Models
          </a>
          <a href="/openapi.json">API reference</a>
        </nav>
        <button
          type="button"
          class="link"
          onClick={() => {
            ctx.signOut();
            navigate('/', true);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main">
        <Route path={path} />
      </main>
    </SessionContext.Provider>
  );
}

function Route(props: { path: string }) {
  const parts = props.path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return <ProjectsPage />;
  if (parts[0] === 'models' && parts.length === 1) return <ModelsPage />;
  if (parts[0] === 'projects' && parts[1]) return <ProjectLayout projectId={parts[1]} rest={parts.slice(2)} />;
  return (
    <Notice kind="info" title="No such page">
      <p>
        <a href={href('/')} onClick={(e) => onLinkClick(e, '/')}>
          Back to the projects
        </a>
      </p>
    </Notice>
  );
}
