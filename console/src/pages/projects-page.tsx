// Projects: the list and a form to create one.
import { useState } from 'preact/hooks';
import { useSession } from '../session-context';
import { useLoad } from '../use-load';
import { fmtDateTime } from '../format';
import { href, navigate, onLinkClick } from '../router';
import { ErrorNotice, Loading, Notice, errorMessage } from '../components/notice';
import { useAdminErrors } from './use-admin-errors';

export function ProjectsPage() {
  const { api } = useSession();
  const projects = useLoad(() => api.projects(), [api]);
  useAdminErrors(projects.error);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const p = await api.createProject(name.trim());
      setName('');
      navigate(`/projects/${encodeURIComponent(p.id)}/keys`);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>Projects</h1>
      <form class="panel row" onSubmit={create}>
        <label for="project-name">New project</label>
        <input
          id="project-name"
          required
          maxLength={100}
          placeholder="Name"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy || !name.trim()}>
          Create project
        </button>
      </form>
      {error && (
        <Notice kind="error" title="Could not create the project">
          {error}
        </Notice>
      )}
      {projects.loading && !projects.data && <Loading what="projects" />}
      {projects.error != null && <ErrorNotice error={projects.error} what="projects" />}
      {projects.data && (
        <table class="data" aria-label="Projects">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {projects.data.data.map((p) => (
              <tr key={p.id}>
                <td>
                  <a
                    href={href(`/projects/${encodeURIComponent(p.id)}/keys`)}
                    onClick={(e) => onLinkClick(e, `/projects/${encodeURIComponent(p.id)}/keys`)}
                  >
                    {p.name}
                  </a>
                </td>
                <td>
                  <code>{p.id}</code>
                </td>
                <td>{fmtDateTime(p.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
