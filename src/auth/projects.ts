// Projects and their API keys: the repository the CLI, the admin API and the auth hook share.
import type { Db } from '../store/db.js';
import { isoTime } from '../store/timestamps.js';
import { errors } from '../base/errors.js';
import { newId } from '../base/ids.js';
import { generateKey, hashKey, keyHint } from './api-key.js';
import { sql } from './projects.sql.js';

export interface Project {
  id: string;
  name: string;
  created_at: string;
}
export interface KeyRecord {
  id: string;
  project_id: string;
  name: string;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  disabled_at: string | null;
}

const toProject = (r: Record<string, unknown>): Project => ({
  id: String(r.id),
  name: String(r.name),
  created_at: isoTime(r.created_at)!,
});
const toKey = (r: Record<string, unknown>): KeyRecord => ({
  id: String(r.id),
  project_id: String(r.project_id),
  name: String(r.name),
  hint: String(r.hint),
  created_at: isoTime(r.created_at)!,
  last_used_at: isoTime(r.last_used_at),
  disabled_at: isoTime(r.disabled_at),
});

function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string })?.code === '23505';
}

export class Projects {
  constructor(private readonly db: Db) {}

  async create(name: string): Promise<Project> {
    try {
      const [row] = await this.db.query(sql.insertProject, [newId('proj'), name]);
      return toProject(row!);
    } catch (e) {
      if (isUniqueViolation(e)) throw errors.duplicateProjectName(name);
      throw e;
    }
  }

  async list(): Promise<Project[]> {
    return (await this.db.query(sql.listProjects)).map(toProject);
  }

  async get(id: string): Promise<Project | null> {
    const [row] = await this.db.query(sql.projectById, [id]);
    return row ? toProject(row) : null;
  }

  /** For the CLI, which accepts either. */
  async find(idOrName: string): Promise<Project | null> {
    const [row] = await this.db.query(sql.projectByIdOrName, [idOrName]);
    return row ? toProject(row) : null;
  }

  async createKey(projectId: string, name: string): Promise<KeyRecord & { key: string }> {
    const key = generateKey();
    const [row] = await this.db.query(sql.insertKey, [newId('key'), projectId, name, keyHint(key), hashKey(key)]);
    return { ...toKey(row!), key };
  }

  async listKeys(projectId?: string): Promise<KeyRecord[]> {
    const rows = projectId ? await this.db.query(sql.listKeys, [projectId]) : await this.db.query(sql.listAllKeys);
    return rows.map(toKey);
  }

  async disableKey(projectId: string, keyId: string): Promise<KeyRecord | null> {
    const [row] = await this.db.query(sql.disableKey, [keyId, projectId]);
    return row ? toKey(row) : null;
  }

  async findKeys(idOrHint: string): Promise<KeyRecord[]> {
    return (await this.db.query(sql.keysByIdOrHint, [idOrHint])).map(toKey);
  }

  async keyByHash(
    hash: Buffer,
  ): Promise<{ id: string; project_id: string; key_hash: Buffer; disabled: boolean } | null> {
    const [row] = await this.db.query(sql.keyByHash, [hash]);
    if (!row) return null;
    return {
      id: String(row.id),
      project_id: String(row.project_id),
      key_hash: Buffer.from(row.key_hash as Uint8Array),
      disabled: row.disabled_at != null,
    };
  }

  async touchKey(id: string): Promise<void> {
    await this.db.query(sql.touchKey, [id]);
  }

  /** First start on an empty database: project `default` with one key, returned once to be printed. */
  async bootstrap(): Promise<{ project: Project; key: string } | null> {
    const [row] = await this.db.query<{ n: number }>(sql.countProjects);
    if (Number(row?.n) > 0) return null;
    try {
      const project = await this.create('default');
      const { key } = await this.createKey(project.id, 'default');
      return { project, key };
    } catch (e) {
      // Another node bootstrapped at the same moment.
      if ((e as { status?: number }).status === 409) return null;
      throw e;
    }
  }
}
