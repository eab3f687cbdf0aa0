// The admin API (/admin/v1, docs/operations.md, "Projects, keys and the admin API") with the signed-in admin token.
import { requestJson } from './http';
import type {
  AddedModel,
  ApiKey,
  CreatedKey,
  GpuList,
  List,
  Model,
  ModelSettingsPatch,
  Project,
  UsageList,
} from './types';

const base = '/admin/v1';
const enc = encodeURIComponent;

export function adminApi(token: string) {
  return {
    projects: () => requestJson<List<Project>>(`${base}/projects`, { token }),
    createProject: (name: string) =>
      requestJson<Project>(`${base}/projects`, { token, method: 'POST', json: { name } }),
    keys: (projectId: string) => requestJson<List<ApiKey>>(`${base}/projects/${enc(projectId)}/keys`, { token }),
    createKey: (projectId: string, name: string) =>
      requestJson<CreatedKey>(`${base}/projects/${enc(projectId)}/keys`, { token, method: 'POST', json: { name } }),
    disableKey: (projectId: string, keyId: string) =>
      requestJson<ApiKey>(`${base}/projects/${enc(projectId)}/keys/${enc(keyId)}/disable`, { token, method: 'POST' }),
    usage: (projectId: string, from: string, to: string) =>
      requestJson<UsageList>(`${base}/projects/${enc(projectId)}/usage?from=${enc(from)}&to=${enc(to)}`, { token }),
    models: () => requestJson<List<Model>>(`${base}/models`, { token }),
    addModel: (body: { source: string; id?: string }) =>
      requestJson<AddedModel>(`${base}/models`, { token, method: 'POST', json: body }),
    updateModel: (id: string, body: ModelSettingsPatch) =>
      requestJson<Model>(`${base}/models/${enc(id)}`, { token, method: 'PATCH', json: body }),
    loadModel: (id: string) => requestJson<Model>(`${base}/models/${enc(id)}/load`, { token, method: 'POST' }),
    unloadModel: (id: string) => requestJson<Model>(`${base}/models/${enc(id)}/unload`, { token, method: 'POST' }),
    gpus: () => requestJson<GpuList>(`${base}/gpus`, { token }),
    removeModel: (id: string) =>
      requestJson<{ id: string; deleted: true }>(`${base}/models/${enc(id)}`, { token, method: 'DELETE' }),
  };
}
export type AdminApi = ReturnType<typeof adminApi>;
