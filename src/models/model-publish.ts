// Added models across nodes. With PostgreSQL (several nodes, possibly with different data dirs) an added
// model is published to the database: manifest plus file bytes (model-store.sql.ts). Every node pulls what
// it lacks into its own data dir (file verified against the recorded sha256 before it is renamed into
// place) and drops what was removed; its ModelsService then picks the manifests up like any other. The file
// travels through the database rather than by each node downloading the source again, so a model added from
// a local file or a private URL reaches nodes that could not read that source.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../base/log.js';
import { openDb, type Db } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import type { Migration } from '../store/migrations.sql.js';
import { ManifestSchema, type ModelManifest, type ModelRuntimeSettings } from '../inference/manifest.js';
import { publishSettings } from './settings-publish.js';
import { sha256File, type ModelRegistry } from '../inference/registry.js';
import { writeManifest } from './model-install.js';
import { modelSql, settingsSql } from './model-store.sql.js';

export const CHUNK_BYTES = 4 * 1024 * 1024;

function sourceSha(m: ModelManifest): string | undefined {
  return 'file' in m.source ? m.source.sha256 : undefined;
}

/** Stores an added model (manifest and file) for every node; replaces an earlier one under the same id. */
export async function publishModel(db: Db, manifest: ModelManifest, file: string): Promise<void> {
  const sha = sourceSha(manifest) ?? (await sha256File(file));
  await db.tx(async (q) => {
    await q.query(modelSql.deleteChunks, [sha]);
    let n = 0;
    let bytes = 0;
    for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES })) {
      await q.query(modelSql.insertChunk, [sha, n++, chunk as Buffer]);
      bytes += (chunk as Buffer).length;
    }
    await q.query(modelSql.upsert, [manifest.id, JSON.stringify(manifest), sha, bytes]);
  });
}

/** Marks a model removed for every node; false when there was no live one. */
export async function unpublishModel(db: Db, id: string): Promise<boolean> {
  return db.tx(async (q) => {
    const rows = await q.query<{ sha256: string }>(modelSql.remove, [id]);
    if (rows[0]) await q.query(modelSql.dropOrphanChunks, [rows[0].sha256]);
    // Settings changed for it while it ran go with it, on every node.
    await q.query(settingsSql.drop, [id]);
    return rows.length > 0;
  });
}

interface Row {
  id: string;
  manifest: unknown;
  sha256: string;
  bytes: string | number;
  removed_at: unknown;
}

/**
 * Brings this node's data dir in line with the shared store: writes the models it lacks (or holds in an
 * older version), deletes the ones removed. Returns how many it changed; the caller re-reads the folder.
 */
export async function pullModels(db: Db, registry: ModelRegistry, log: Logger): Promise<number> {
  const rows = await db.query<Row & Record<string, unknown>>(modelSql.list);
  const manifestsDir = join(registry.dataDir, 'manifests');
  let changed = 0;
  for (const row of rows) {
    const local = registry.has(row.id) ? registry.get(row.id) : undefined;
    if (registry.isPending(row.id)) continue;
    const ownedHere = local && !local.builtin && dirname(local.manifestPath) === manifestsDir;
    if (row.removed_at) {
      if (ownedHere && sourceSha(local.manifest) === row.sha256) {
        await rm(local.manifestPath, { force: true });
        await rm(join(registry.modelsDir, row.id), { recursive: true, force: true });
        await registry.setOverride(row.id, null);
        log.info({ model: row.id }, `model ${row.id} was removed on another node; removed here`);
        changed++;
      }
      continue;
    }
    if (local && (!ownedHere || sourceSha(local.manifest) === row.sha256)) continue;
    const parsed = ManifestSchema.safeParse(typeof row.manifest === 'string' ? JSON.parse(row.manifest) : row.manifest);
    if (!parsed.success) {
      log.error({ model: row.id }, `shared model ${row.id} has an unreadable manifest; skipped`);
      continue;
    }
    try {
      const file = await fetchFile(db, registry, row.id, row.sha256, Number(row.bytes));
      const manifest: ModelManifest = { ...parsed.data, source: { file, sha256: row.sha256, files: [] } };
      await writeManifest(registry.manifestPathFor(row.id), manifest);
      log.info({ model: row.id, sha256: row.sha256 }, `model ${row.id} added on another node; installed here`);
      changed++;
    } catch (e) {
      log.error(
        { model: row.id, err: (e as Error).message },
        `shared model ${row.id} could not be installed: ${(e as Error).message}`,
      );
    }
  }
  return changed;
}

/** The model's file at this node's prepared path, written from the chunks and checked before it is renamed in. */
async function fetchFile(db: Db, registry: ModelRegistry, id: string, sha: string, bytes: number): Promise<string> {
  const dir = join(registry.modelsDir, id);
  const path = join(dir, `${sha}.onnx`);
  // Data dirs that share one models dir find the file already there.
  if (existsSync(path) && (await sha256File(path)) === sha) return path;
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.pull-${process.pid}-${Date.now()}.onnx`);
  try {
    const out = await open(tmp, 'w');
    const h = createHash('sha256');
    try {
      const count = Math.ceil(bytes / CHUNK_BYTES);
      for (let n = 0; n < count; n++) {
        const [c] = await db.query<{ data: Uint8Array }>(modelSql.chunk, [sha, n]);
        if (!c) throw new Error(`chunk ${n} of ${count} is missing`);
        h.update(c.data);
        await out.write(c.data);
      }
    } finally {
      await out.close();
    }
    const got = h.digest('hex');
    if (got !== sha) throw new Error(`the stored file has sha256 ${got}, ${sha} was recorded`);
    await rename(tmp, path);
  } finally {
    await rm(tmp, { force: true });
  }
  await writeFile(
    join(dir, 'prepared.json'),
    JSON.stringify({ id, sha256: sha, format: 'onnx', preparedAt: new Date().toISOString() }, null, 2) + '\n',
  );
  return path;
}

/** For the CLI on a shared database: publish and unpublish through a connection of its own. */
export function sharedModelStore(
  databaseUrl: string,
  dataDir: string,
  migrations: Migration[],
): {
  publish: (m: ModelManifest, file: string) => Promise<void>;
  unpublish: (id: string) => Promise<void>;
  publishSettings: (id: string, runtime: ModelRuntimeSettings) => Promise<void>;
} {
  const withDb = async <T>(fn: (db: Db) => Promise<T>): Promise<T> => {
    const db = await openDb({ databaseUrl, dataDir, poolSize: 2 });
    try {
      await migrate(db, migrations);
      return await fn(db);
    } finally {
      await db.close();
    }
  };
  return {
    publish: (m, file) => withDb((db) => publishModel(db, m, file)),
    unpublish: async (id) => {
      await withDb((db) => unpublishModel(db, id));
    },
    publishSettings: (id, runtime) => withDb((db) => publishSettings(db, id, runtime)),
  };
}
