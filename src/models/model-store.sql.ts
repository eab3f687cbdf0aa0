// The shared store of added models (PostgreSQL runs with several nodes): each model's manifest and its ONNX
// bytes in 4 MiB chunks keyed by checksum, so a node whose data dir never saw the file can fetch it from the
// one database every node already uses. A removed model keeps its row with removed_at set (a tombstone) so
// nodes that hold it learn to drop it; its chunks go at once.
export const modelSql = {
  deleteChunks: `DELETE FROM added_model_chunks WHERE sha256 = $1`,
  insertChunk: `INSERT INTO added_model_chunks (sha256, n, data) VALUES ($1, $2, $3) ON CONFLICT (sha256, n) DO NOTHING`,
  upsert: `
    INSERT INTO added_models (id, manifest, sha256, bytes, removed_at, updated_at) VALUES ($1, $2, $3, $4, NULL, now())
    ON CONFLICT (id) DO UPDATE SET manifest = EXCLUDED.manifest, sha256 = EXCLUDED.sha256, bytes = EXCLUDED.bytes,
      removed_at = NULL, updated_at = now()`,
  /** Tombstones a model; returns its checksum when it was live. */
  remove: `UPDATE added_models SET removed_at = now(), updated_at = now() WHERE id = $1 AND removed_at IS NULL RETURNING sha256`,
  /** Chunks that no live model uses any more. */
  dropOrphanChunks: `
    DELETE FROM added_model_chunks c WHERE c.sha256 = $1
      AND NOT EXISTS (SELECT 1 FROM added_models m WHERE m.sha256 = c.sha256 AND m.removed_at IS NULL)`,
  list: `SELECT id, manifest, sha256, bytes, removed_at FROM added_models ORDER BY id`,
  chunk: `SELECT data FROM added_model_chunks WHERE sha256 = $1 AND n = $2`,
};

// Serving settings changed while running (PATCH /admin/v1/models/:id), built-in and added models alike: one
// runtime block per model id, NULL once dropped (its model removed), so nodes holding it learn to drop it.
export const settingsSql = {
  upsert: `
    INSERT INTO model_settings (id, runtime, updated_at) VALUES ($1, $2, now())
    ON CONFLICT (id) DO UPDATE SET runtime = EXCLUDED.runtime, updated_at = now()`,
  drop: `UPDATE model_settings SET runtime = NULL, updated_at = now() WHERE id = $1 AND runtime IS NOT NULL`,
  list: `SELECT id, runtime FROM model_settings ORDER BY id`,
};
