// The public API (/v1) with a project key: video tasks and vector collections (docs/video.md, docs/vectors.md).
import { requestBlob, requestJson } from './http';
import type {
  AnalyticsRecount,
  AnalyticsRules,
  AnalyticsView,
  Collection,
  CollectionItem,
  List,
  SearchResponse,
  TaskResults,
  VideoTask,
} from './types';

const enc = encodeURIComponent;

export interface SearchQuery {
  text?: string;
  image_base64?: string;
  top_k?: number;
  threshold?: number;
  filter?: Record<string, unknown>;
  group_by?: 'video';
  merge_gap_ms?: number;
}

export function projectApi(key: string) {
  return {
    /** The stream reader sends it too (fetch-based SSE, see task-stream.ts). */
    key,
    project: () => requestJson<{ id: string; name: string }>('/v1/project', { token: key }),
    tasks: (q: { status?: string; cursor?: string | null; limit?: number }) => {
      const p = new URLSearchParams();
      if (q.status) p.set('status', q.status);
      if (q.cursor) p.set('cursor', q.cursor);
      p.set('limit', String(q.limit ?? 25));
      return requestJson<List<VideoTask>>(`/v1/video/tasks?${p}`, { token: key });
    },
    task: (id: string) => requestJson<VideoTask>(`/v1/video/tasks/${enc(id)}?include=request`, { token: key }),
    results: (id: string) => requestJson<TaskResults>(`/v1/video/tasks/${enc(id)}/results`, { token: key }),
    cancel: (id: string) => requestJson<VideoTask>(`/v1/video/tasks/${enc(id)}/cancel`, { token: key, method: 'POST' }),
    process: (body: unknown) =>
      requestJson<{ id: string; status: string }>('/v1/video/process', { token: key, method: 'POST', json: body }),
    analytics: (id: string) => requestJson<AnalyticsView>(`/v1/video/tasks/${enc(id)}/analytics`, { token: key }),
    setAnalytics: (id: string, parameters: AnalyticsRules) =>
      requestJson<AnalyticsView>(`/v1/video/tasks/${enc(id)}/analytics`, {
        token: key,
        method: 'PUT',
        json: { parameters },
      }),
    recount: (id: string, parameters: AnalyticsRules) =>
      requestJson<AnalyticsRecount>(`/v1/video/tasks/${enc(id)}/analytics/recount`, {
        token: key,
        method: 'POST',
        json: { parameters },
      }),
    heatmap: (id: string) => requestBlob(`/v1/video/tasks/${enc(id)}/heatmap.png`, { token: key }),
    collections: () => requestJson<List<Collection>>('/v1/vectors/collections', { token: key }),
    collection: (id: string) => requestJson<Collection>(`/v1/vectors/collections/${enc(id)}`, { token: key }),
    createCollection: (name: string, description?: string) =>
      requestJson<Collection>('/v1/vectors/collections', {
        token: key,
        method: 'POST',
        json: description ? { name, description } : { name },
      }),
    deleteCollection: (id: string) =>
      requestJson<{ deleted: true }>(`/v1/vectors/collections/${enc(id)}`, { token: key, method: 'DELETE' }),
    items: (id: string, limit: number) =>
      requestJson<List<CollectionItem>>(`/v1/vectors/collections/${enc(id)}/items?limit=${limit}`, { token: key }),
    indexItems: (id: string, items: Array<Record<string, unknown>>) =>
      requestJson<{ indexed: number; ids?: string[] }>(`/v1/vectors/collections/${enc(id)}/index`, {
        token: key,
        method: 'POST',
        json: { items },
      }),
    search: (id: string, q: SearchQuery) =>
      requestJson<SearchResponse>(`/v1/vectors/collections/${enc(id)}/search`, { token: key, method: 'POST', json: q }),
  };
}
export type ProjectApi = ReturnType<typeof projectApi>;
