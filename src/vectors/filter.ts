// Search filters over item metadata: the grammar (parseFilter turns a request's `filter` into a checked tree,
// or a 400 naming the offending path), and one item's match (matchesFilter). Evaluating a filter over a whole
// collection is metadata-columns.ts's job.
//
// Grammar (docs/vectors.md, "Filtered search"; the OpenAPI document describes it too):
//   filter    = { clause, ... }                  every clause must hold; {} matches every item
//   clause    = "$and": [filter, ...]            every filter holds (1-64 of them)
//             | "$or":  [filter, ...]            at least one holds (1-64 of them)
//             | <key>: scalar                    the item's metadata[key] equals scalar
//             | <key>: { op: value, ... }        every operator holds
//   op        = $eq scalar | $in [scalar, ...] (1-1000) | $gt | $gte | $lt | $lte number
//   scalar    = string | finite number | boolean
// Keys are top-level metadata keys (1-256 characters, not starting with "$"). Equality is strict: 1 does
// not equal "1" or true, and a key the item lacks (or that holds an object, array or null) equals nothing.
// Range operators match numbers only. $and/$or nest at most MAX_DEPTH deep; one filter holds at most
// MAX_CONDITIONS conditions.
import { errors } from '../base/errors.js';

export type Scalar = string | number | boolean;
export type Cmp = 'gt' | 'gte' | 'lt' | 'lte';

export type FilterNode =
  | { op: 'and'; nodes: FilterNode[] }
  | { op: 'or'; nodes: FilterNode[] }
  | { op: 'eq'; key: string; value: Scalar }
  | { op: 'in'; key: string; values: Set<Scalar> }
  | { op: 'cmp'; key: string; cmp: Cmp; value: number };

export const MAX_DEPTH = 4;
export const MAX_IN_VALUES = 1000;
export const MAX_CONDITIONS = 64;
const MAX_KEY_CHARS = 256;
const OPERATORS = ['$eq', '$in', '$gt', '$gte', '$lt', '$lte'];

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is Scalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length ? `an array of ${v.length}` : 'an empty array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return v.length > 60 ? `a string of ${v.length} characters` : JSON.stringify(v);
  return String(v);
}

const bad = (path: string, what: string, got: unknown) =>
  errors.invalidParam(path, `Expected ${what} for ${path} but received ${describe(got)}`);

/** The checked tree of a request's `filter`, or null when it holds no condition ({}). Throws a 400
 * (invalid_parameter, `param` the path of the offending part, e.g. filter.$or[1].price.$gt). */
export function parseFilter(raw: unknown, path = 'filter'): FilterNode | null {
  const count = { n: 0 };
  const node = parseObject(raw, path, 0, count);
  return node.op === 'and' && node.nodes.length === 0 ? null : node;
}

function parseObject(raw: unknown, path: string, depth: number, count: { n: number }): FilterNode {
  if (!isPlainObject(raw)) throw bad(path, 'an object of conditions', raw);
  const nodes: FilterNode[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const at = `${path}.${key}`;
    if (key === '$and' || key === '$or') {
      if (depth + 1 > MAX_DEPTH)
        throw errors.invalidParam(
          at,
          `Expected $and/$or nested at most ${MAX_DEPTH} deep for ${path} but received deeper nesting`,
        );
      if (!Array.isArray(value) || value.length < 1 || value.length > MAX_CONDITIONS)
        throw bad(at, `an array of 1 to ${MAX_CONDITIONS} filter objects`, value);
      const children = value.map((v, i) => parseObject(v, `${at}[${i}]`, depth + 1, count));
      nodes.push({ op: key === '$and' ? 'and' : 'or', nodes: children });
      continue;
    }
    if (key.startsWith('$'))
      throw errors.invalidParam(
        at,
        `Expected a metadata key, $and or $or for ${at} but received the operator ${JSON.stringify(key)} (operators go inside a key's condition: {"price": {"$gt": 10}})`,
      );
    if (key.length > MAX_KEY_CHARS)
      throw errors.invalidParam(
        path,
        `Expected metadata keys of at most ${MAX_KEY_CHARS} characters for ${path} but received one of ${key.length}`,
      );
    if (isScalar(value)) {
      nodes.push(leaf({ op: 'eq', key, value }, at, count));
      continue;
    }
    if (!isPlainObject(value))
      throw bad(
        at,
        'a string, finite number, boolean or an object of operators ($eq, $in, $gt, $gte, $lt, $lte)',
        value,
      );
    const ops = Object.entries(value);
    if (ops.length === 0) throw bad(at, 'at least one operator ($eq, $in, $gt, $gte, $lt, $lte)', value);
    for (const [op, operand] of ops) {
      const opAt = `${at}.${op}`;
      if (!OPERATORS.includes(op))
        throw errors.invalidParam(
          opAt,
          `Expected one of the operators ${OPERATORS.join(', ')} for ${at} but received ${JSON.stringify(op)}`,
        );
      if (op === '$eq') {
        if (!isScalar(operand)) throw bad(opAt, 'a string, finite number or boolean', operand);
        nodes.push(leaf({ op: 'eq', key, value: operand }, opAt, count));
      } else if (op === '$in') {
        if (!Array.isArray(operand) || operand.length < 1 || operand.length > MAX_IN_VALUES)
          throw bad(opAt, `an array of 1 to ${MAX_IN_VALUES} strings, numbers or booleans`, operand);
        operand.forEach((v, i) => {
          if (!isScalar(v)) throw bad(`${opAt}[${i}]`, 'a string, finite number or boolean', v);
        });
        nodes.push(leaf({ op: 'in', key, values: new Set(operand as Scalar[]) }, opAt, count));
      } else {
        if (typeof operand !== 'number' || !Number.isFinite(operand)) throw bad(opAt, 'a finite number', operand);
        nodes.push(leaf({ op: 'cmp', key, cmp: op.slice(1) as Cmp, value: operand }, opAt, count));
      }
    }
  }
  return nodes.length === 1 ? nodes[0]! : { op: 'and', nodes };
}

function leaf(node: FilterNode, at: string, count: { n: number }): FilterNode {
  if (++count.n > MAX_CONDITIONS)
    throw errors.invalidParam(at, `Expected at most ${MAX_CONDITIONS} conditions in one filter but received more`);
  return node;
}

export function compare(cmp: Cmp, x: number, v: number): boolean {
  switch (cmp) {
    case 'gt':
      return x > v;
    case 'gte':
      return x >= v;
    case 'lt':
      return x < v;
    case 'lte':
      return x <= v;
  }
}

/** Whether one item's metadata satisfies the filter. */
export function matchesFilter(node: FilterNode, metadata: Record<string, unknown>): boolean {
  switch (node.op) {
    case 'and':
      return node.nodes.every((n) => matchesFilter(n, metadata));
    case 'or':
      return node.nodes.some((n) => matchesFilter(n, metadata));
    case 'eq':
      return Object.hasOwn(metadata, node.key) && metadata[node.key] === node.value;
    case 'in': {
      const v = Object.hasOwn(metadata, node.key) ? metadata[node.key] : undefined;
      return isScalar(v) && node.values.has(v);
    }
    case 'cmp': {
      const v = Object.hasOwn(metadata, node.key) ? metadata[node.key] : undefined;
      return typeof v === 'number' && compare(node.cmp, v, node.value);
    }
  }
}

/** The filter's canonical form, equal for filters that match the same items by construction: clauses of
 * $and/$or and values of $in in a fixed order, a single-clause $and/$or as its clause, values typed (1, "1" and
 * true differ). The key of a filter's cached answer (MetadataColumns.evaluate). */
export function filterCacheKey(node: FilterNode): string {
  switch (node.op) {
    case 'and':
    case 'or': {
      if (node.nodes.length === 1) return filterCacheKey(node.nodes[0]!);
      return `${node.op}(${node.nodes.map(filterCacheKey).sort().join(',')})`;
    }
    case 'eq':
      return `eq(${JSON.stringify(node.key)},${JSON.stringify(node.value)})`;
    case 'in':
      return `in(${JSON.stringify(node.key)},${[...node.values]
        .map((v) => JSON.stringify(v))
        .sort()
        .join(',')})`;
    case 'cmp':
      return `${node.cmp}(${JSON.stringify(node.key)},${JSON.stringify(node.value)})`;
  }
}
