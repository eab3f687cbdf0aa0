// A plausible value for a JSON Schema of the OpenAPI document (draft 2020-12 as zod writes it): required
// properties always, optional ones at random, enums and consts as given, bounds respected. Strings that name
// something take a value from `hints` by property name (ids of real fixtures, loopback URLs), so a mutated
// request often gets past the first checks and reaches deeper ones.
import type { Random } from './random.js';
import { LOCAL_URL } from './hostile-values.js';

export type Schema = Record<string, any>;

export interface SampleContext {
  r: Random;
  /** The document's components, for $ref. */
  components: Record<string, Schema>;
  /** Values by property name, one picked at random. */
  hints: Record<string, unknown[]>;
}

export function sample(c: SampleContext, s: Schema | undefined, name = '', depth = 0): unknown {
  if (!s || depth > 8) return null;
  if (s.$ref) return sample(c, c.components[String(s.$ref).split('/').pop()!], name, depth + 1);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return c.r.pick(s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts)) {
    const nonNull = alts.filter((a: Schema) => a.type !== 'null');
    return sample(c, c.r.pick(nonNull.length ? nonNull : alts), name, depth + 1);
  }
  if (s.allOf) return sample(c, Object.assign({}, ...s.allOf), name, depth + 1);
  const hint = c.hints[name];
  let type = Array.isArray(s.type) ? c.r.pick(s.type.filter((t: string) => t !== 'null')) : s.type;
  if (!type) type = s.properties ? 'object' : s.items ? 'array' : hint ? 'hint' : 'string';
  if (hint && (type === 'string' || type === 'hint')) return c.r.pick(hint);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set<string>(s.required ?? []);
      for (const [k, sub] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
        if (required.has(k) || c.r.chance(0.3)) out[k] = sample(c, sub, k, depth + 1);
      }
      if (!s.properties && s.additionalProperties !== false && c.r.chance(0.5))
        out[c.r.pick(['color', 'n', 'tag'])] = c.r.pick(['red', 1, true]);
      return out;
    }
    case 'array': {
      const min = s.minItems ?? 0;
      const n = Math.min(min + c.r.int(2), s.maxItems ?? 3);
      return Array.from({ length: n }, () => sample(c, s.items, name, depth + 1));
    }
    case 'integer':
    case 'number': {
      const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
      const hi = s.maximum ?? lo + 10;
      const v = lo + c.r.next() * (hi - lo);
      return type === 'integer' ? Math.round(v) : v;
    }
    case 'boolean':
      return c.r.chance(0.5);
    case 'null':
      return null;
    default: {
      if (s.format === 'uri' || /url|image|audio|source|webhook/i.test(name)) return LOCAL_URL;
      const len = Math.max(s.minLength ?? 1, Math.min(s.maxLength ?? 8, 8));
      return 'abcdefghij'.slice(0, len).padEnd(len, 'x');
    }
  }
}
