// A small table router: routes are split into segments once; lookup walks the table for the path and
// tells a missing route (404) from a wrong method on a known path (405).
import type { Method, RouteDef } from './route.js';

interface Compiled {
  def: RouteDef;
  segments: string[];
}

export type Match =
  | { kind: 'found'; def: RouteDef; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: Method[] }
  | { kind: 'not_found' };

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export class Router {
  private readonly routes: Compiled[] = [];
  /** Routes without parameters by exact path, then method: the hot path is one Map lookup and no allocation. */
  private readonly literal = new Map<string, Map<string, Match>>();

  add(def: RouteDef): void {
    if (this.routes.some((r) => r.def.method === def.method && r.def.path === def.path)) {
      throw new Error(`duplicate route ${def.method} ${def.path}`);
    }
    const segments = def.path.split('/').filter(Boolean);
    this.routes.push({ def, segments });
    if (!segments.some((seg) => seg.startsWith(':') || seg === '*')) {
      const path = `/${segments.join('/')}`;
      const byMethod = this.literal.get(path) ?? new Map<string, Match>();
      byMethod.set(def.method, { kind: 'found', def, params: NO_PARAMS });
      this.literal.set(path, byMethod);
    }
    // Literal segments win over parameters: `/tasks/list` before `/tasks/:id`.
    this.routes.sort((a, b) => score(b) - score(a));
  }

  all(): RouteDef[] {
    return this.routes.map((r) => r.def);
  }

  match(method: string, path: string): Match {
    // A literal route wins over any parameter route of the same path (the table's order says the same).
    const hit = this.literal.get(path)?.get(method);
    if (hit) return hit;
    const parts = path.split('/').filter(Boolean);
    const allowed: Method[] = [];
    for (const r of this.routes) {
      const params = matchSegments(r.segments, parts);
      if (!params) continue;
      if (r.def.method === method) return { kind: 'found', def: r.def, params };
      allowed.push(r.def.method);
    }
    return allowed.length ? { kind: 'method_not_allowed', allowed: [...new Set(allowed)] } : { kind: 'not_found' };
  }
}

function score(r: Compiled): number {
  return r.segments.reduce((s, seg) => s * 2 + (seg.startsWith(':') || seg === '*' ? 0 : 1), r.segments.length);
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p === '*') {
      params['*'] = parts.slice(i).map(decode).join('/');
      return parts.length > i ? params : null;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (p.startsWith(':')) params[p.slice(1)] = decode(part);
    else if (p !== part) return null;
  }
  return pattern.length === parts.length ? params : null;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
