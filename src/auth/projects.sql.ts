// Projects and API keys. Keys are looked up by the SHA-256 of the presented key.
export const sql = {
  insertProject: `INSERT INTO projects (id, name) VALUES ($1, $2) RETURNING id, name, created_at`,
  listProjects: `SELECT id, name, created_at FROM projects ORDER BY created_at, id`,
  countProjects: `SELECT count(*)::int AS n FROM projects`,
  projectById: `SELECT id, name, created_at FROM projects WHERE id = $1`,
  projectByIdOrName: `SELECT id, name, created_at FROM projects WHERE id = $1 OR name = $1`,
  insertKey: `INSERT INTO api_keys (id, project_id, name, hint, key_hash) VALUES ($1, $2, $3, $4, $5)
              RETURNING id, project_id, name, hint, created_at, last_used_at, disabled_at`,
  listKeys: `SELECT id, project_id, name, hint, created_at, last_used_at, disabled_at FROM api_keys
             WHERE project_id = $1 ORDER BY created_at, id`,
  listAllKeys: `SELECT id, project_id, name, hint, created_at, last_used_at, disabled_at FROM api_keys ORDER BY created_at, id`,
  keyByHash: `SELECT id, project_id, key_hash, disabled_at FROM api_keys WHERE key_hash = $1`,
  disableKey: `UPDATE api_keys SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1 AND project_id = $2
               RETURNING id, project_id, name, hint, created_at, last_used_at, disabled_at`,
  keysByIdOrHint: `SELECT id, project_id, name, hint, created_at, last_used_at, disabled_at FROM api_keys
                   WHERE id = $1 OR hint = $1`,
  touchKey: `UPDATE api_keys SET last_used_at = now() WHERE id = $1`,
};
