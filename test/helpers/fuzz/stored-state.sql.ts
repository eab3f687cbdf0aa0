// What a request could store, as one row of digests: the sweep compares it before and after each refused
// request (nothing may change). Columns a request legitimately touches without storing anything
// (api_keys.last_used_at, a task's lease and progress) are left out.
const digest = (cols: string, table: string) =>
  `(SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') FROM (SELECT ${cols} FROM ${table}) x)`;

export const sql = {
  storedState: `SELECT
    ${digest('id, name', 'projects')} AS projects,
    ${digest('id, project_id, name, disabled_at', 'api_keys')} AS api_keys,
    ${digest('id, name, description, model_id, item_count, change_seq', 'vector_collections')} AS collections,
    ${digest('collection_id, id, text, metadata, md5(vector)', 'vector_items')} AS items,
    ${digest('collection_id, key', 'vector_deletions')} AS deletions,
    ${digest('id, status, request', 'video_tasks')} AS tasks,
    ${digest('id', 'usage_events')} AS usage,
    ${digest('project_id, key, status', 'idempotency_keys')} AS idempotency,
    ${digest('id, removed_at', 'added_models')} AS models`,
};
