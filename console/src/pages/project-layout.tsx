// A project's pages: its name, the section tabs, and the section for the rest of the path.
import { useSession } from '../session-context';
import { useLoad } from '../use-load';
import { href, onLinkClick } from '../router';
import { ErrorNotice, Loading, Notice } from '../components/notice';
import { ProjectKeyGate } from '../components/project-key-gate';
import { useAdminErrors } from './use-admin-errors';
import { KeysPage } from './keys-page';
import { UsagePage } from './usage-page';
import { TasksPage } from './tasks-page';
import { TaskPage } from './task-page';
import { CollectionsPage } from './collections-page';
import { CollectionPage } from './collection-page';

const SECTIONS = [
  { id: 'keys', label: 'API keys' },
  { id: 'usage', label: 'Usage' },
  { id: 'tasks', label: 'Video tasks' },
  { id: 'collections', label: 'Collections' },
] as const;

export function ProjectLayout(props: { projectId: string; rest: string[] }) {
  const { api } = useSession();
  const projects = useLoad(() => api.projects(), [api]);
  useAdminErrors(projects.error);
  const section = props.rest[0] ?? 'keys';
  const sub = props.rest[1];
  const base = `/projects/${encodeURIComponent(props.projectId)}`;

  if (projects.error != null) return <ErrorNotice error={projects.error} what="the project" />;
  if (!projects.data) return <Loading what="the project" />;
  const project = projects.data.data.find((p) => p.id === props.projectId);
  if (!project)
    return (
      <Notice kind="error" title="No such project">
        There is no project with id <code>{props.projectId}</code>.
      </Notice>
    );

  return (
    <>
      <p class="crumbs">
        <a href={href('/')} onClick={(e) => onLinkClick(e, '/')}>
          Projects
        </a>{' '}
        / <span>{project.name}</span>
      </p>
      <h1>{project.name}</h1>
      <nav class="tabs" aria-label="Project sections">
        {SECTIONS.map((s) => (
          <a
            key={s.id}
            href={href(`${base}/${s.id}`)}
            onClick={(e) => onLinkClick(e, `${base}/${s.id}`)}
            aria-current={section === s.id ? 'page' : undefined}
          >
            {s.label}
          </a>
        ))}
      </nav>
      <section class="section" aria-label={SECTIONS.find((s) => s.id === section)?.label ?? 'Section'}>
        {section === 'keys' && <KeysPage projectId={project.id} />}
        {section === 'usage' && <UsagePage projectId={project.id} />}
        {section === 'tasks' && (
          <ProjectKeyGate projectId={project.id}>
            {(p, rejected) =>
              sub ? (
                <TaskPage api={p} keyRejected={rejected} taskId={sub} basePath={base} />
              ) : (
                <TasksPage api={p} keyRejected={rejected} basePath={base} />
              )
            }
          </ProjectKeyGate>
        )}
        {section === 'collections' && (
          <ProjectKeyGate projectId={project.id}>
            {(p, rejected) =>
              sub ? (
                <CollectionPage api={p} keyRejected={rejected} collectionId={sub} basePath={base} />
              ) : (
                <CollectionsPage api={p} keyRejected={rejected} basePath={base} />
              )
            }
          </ProjectKeyGate>
        )}
        {!SECTIONS.some((s) => s.id === section) && <Notice kind="info" title="No such section" />}
      </section>
    </>
  );
}
