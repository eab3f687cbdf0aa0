// Values a hostile client sends in place of what a schema asks for: characters no database stores, wrong
// types, edge numbers, huge and deeply nested values, names that reach prototypes, and the usual injection
// strings. URLs only ever name loopback (127.0.0.1:9, where nothing listens): the sweep never leaves the host.
import type { Random } from './random.js';

export const NUL = '\u0000';
export const LOCAL_URL = 'http://127.0.0.1:9/x.jpg';

const strings = [
  '',
  ' ',
  `a${NUL}b`,
  NUL,
  `${NUL}${NUL}`,
  '\ud800',
  'x\udfff',
  '\udc00\ud800',
  '\u0001\u001f\u007f',
  '\r\n',
  'é',
  '😀',
  '\u202e',
  '\ufeff',
  '\uffff',
  '%00',
  '%zz',
  '..',
  '../../etc/passwd',
  "' OR '1'='1",
  '"; DROP TABLE projects; --',
  '$where',
  '{{7*7}}',
  '${x}',
  '__proto__',
  'constructor',
  'null',
  'true',
  '-1',
  '1e309',
  'NaN',
  '0x10',
  'a'.repeat(300),
  'b'.repeat(9000),
  'file:///etc/passwd',
  'http://127.0.0.1:9/',
  `http://127.0.0.1:9/a${NUL}`,
  'rtsp://127.0.0.1:9/s',
  'data:image/png;base64,AAAA',
  'data:,x',
  'javascript:alert(1)',
  'whsec_',
  'vt_x',
  'col_x',
  'proj_x',
  'sk_sf_x',
];
const numbers = [0, -0, -1, 1, 0.5, -1e-300, 1e308, -1e308, 2 ** 53 + 1, 2 ** 31, -(2 ** 31) - 1, 1e21, 101, 1001];

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** One hostile value of any type. */
export function hostileValue(r: Random): unknown {
  switch (r.int(9)) {
    case 0:
    case 1:
    case 2:
      return r.pick(strings);
    case 3:
      return r.pick(numbers);
    case 4:
      return r.pick([true, false, null]);
    case 5:
      return r.pick([[], {}, [null], [r.pick(strings)], { [r.pick(strings)]: r.pick(strings) }]);
    case 6:
      return nested(r.pick([10, 63, 65, 300]));
    case 7:
      return Array.from({ length: r.pick([101, 1001]) }, (_, i) => i);
    default:
      return `${r.pick(['ok', 'name', 'x'])}${r.pick(strings.slice(2, 14))}`;
  }
}

export function hostileString(r: Random): string {
  return r.pick(strings);
}

/** An object key a client should not be able to slip through. */
export function hostileKey(r: Random): string {
  return r.pick([
    '__proto__',
    'constructor',
    'prototype',
    `k${NUL}`,
    '\ud800',
    '',
    ' ',
    '$or',
    '$where',
    'a.b',
    'x'.repeat(300),
    'extra',
    '😀',
  ]);
}

type Json = unknown;

/** Paths of every node of a JSON value (arrays and plain objects walked). */
function nodes(
  v: Json,
  path: Array<string | number> = [],
  out: Array<Array<string | number>> = [],
): Array<Array<string | number>> {
  out.push(path);
  if (Array.isArray(v)) v.forEach((x, i) => nodes(x, [...path, i], out));
  else if (v && typeof v === 'object')
    for (const k of Object.keys(v)) nodes((v as Record<string, Json>)[k], [...path, k], out);
  return out;
}

function get(v: Json, path: Array<string | number>): Json {
  for (const p of path) v = (v as Record<string | number, Json>)[p];
  return v;
}

function set(root: Json, path: Array<string | number>, value: Json): Json {
  if (!path.length) return value;
  const parent = get(root, path.slice(0, -1)) as Record<string | number, Json>;
  Object.defineProperty(parent, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
  return root;
}

/** One to three mutations of a (cloned) JSON value: replace, drop or add a field, or garble a string. */
export function mutate(r: Random, value: Json): Json {
  let v = structuredClone(value);
  const n = 1 + r.int(3);
  for (let i = 0; i < n; i++) {
    const all = nodes(v);
    const path = r.pick(all);
    const here = get(v, path);
    const op = r.int(5);
    if (op === 0 || (!path.length && op < 3)) v = set(v, path, hostileValue(r));
    else if (op === 1 && typeof here === 'string')
      v = set(v, path, r.chance(0.5) ? here + hostileString(r) : hostileString(r) + here);
    else if (op === 2 && here && typeof here === 'object' && !Array.isArray(here))
      set(here, [hostileKey(r)], hostileValue(r));
    else if (op === 3 && path.length) {
      const parent = get(v, path.slice(0, -1));
      if (Array.isArray(parent)) parent.splice(path.at(-1) as number, 1);
      else delete (parent as Record<string, Json>)[path.at(-1) as string];
    } else v = set(v, path, hostileValue(r));
  }
  return v;
}
