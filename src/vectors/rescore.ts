// Exact rescoring of index candidates: the 8-bit index proposes candidateCount(k) keys and their exact cosine
// over the float32 vectors the database stores ranks them, so clients get exact scores and a deleted item (no
// stored vector) is never returned.

/** Cosine of a stored vector `v` with a query whose inverse norm is `qInv`, in plain JavaScript. Four
 * independent sums of each kind: a single chain is bound by the add latency. */
function cosineScalar(q: Float32Array, qInv: number, v: Float32Array): number {
  const dims = q.length;
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0,
    n0 = 0,
    n1 = 0,
    n2 = 0,
    n3 = 0;
  let d = 0;
  for (; d + 3 < dims; d += 4) {
    const a = v[d]!,
      b = v[d + 1]!,
      c = v[d + 2]!,
      e = v[d + 3]!;
    s0 += a * q[d]!;
    s1 += b * q[d + 1]!;
    s2 += c * q[d + 2]!;
    s3 += e * q[d + 3]!;
    n0 += a * a;
    n1 += b * b;
    n2 += c * c;
    n3 += e * e;
  }
  for (; d < dims; d++) {
    const a = v[d]!;
    s0 += a * q[d]!;
    n0 += a * a;
  }
  const n = n0 + n1 + n2 + n3;
  return n > 0 ? ((s0 + s1 + s2 + s3) * qInv) / Math.sqrt(n) : 0;
}

/**
 * The same in WebAssembly SIMD (several times the scalar loop's speed, and the rescoring is a measurable part of
 * a search: docs/vectors.md, "Why it is built this way"), from this listing rather than a binary blob. One
 * function, `cos(q, v, bytes) -> f64`: q and v are byte offsets of
 * float32 vectors in its memory, bytes a positive multiple of 16; products are float32 (as exact as float32
 * inputs allow), sums float64, so scores agree with the scalar loop to ~1e-9. Null where WebAssembly SIMD is
 * missing (the scalar loop serves).
 *
 *   loop: x = v128.load(v + i); p = f32x4.mul(x, v128.load(q + i))
 *         dLo += f64x2.promote_low(p); dHi += f64x2.promote_low(high half of p)
 *         p = f32x4.mul(x, x); nLo += ...; nHi += ...          (four independent chains)
 *         i += 16; continue while i < bytes
 *   dot = sum of the lanes of dLo + dHi; nn = the same of nLo + nHi; return nn > 0 ? dot / sqrt(nn) : 0
 */
function simdCosine(): { cos: (q: number, v: number, bytes: number) => number; memory: WebAssembly.Memory } | null {
  const leb = (n: number) => {
    const b: number[] = [];
    do {
      let x = n & 0x7f;
      n >>>= 7;
      if (n) x |= 0x80;
      b.push(x);
    } while (n);
    return b;
  };
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const vec = (items: number[][]) => [...leb(items.length), ...items.flat()];
  const str = (t: string) => [...leb(t.length), ...Buffer.from(t)];
  const simd = (op: number, ...imm: number[]) => [0xfd, ...leb(op), ...imm];
  const get = (i: number) => [0x20, i],
    set = (i: number) => [0x21, i],
    tee = (i: number) => [0x22, i];
  const I32 = 0x7f,
    F64 = 0x7c,
    V128 = 0x7b;
  const load = simd(0x00, 4, 0),
    f32x4Mul = simd(0xe6),
    f64x2Add = simd(0xf0),
    promoteLow = simd(0x5f),
    lane = (l: number) => simd(0x21, l);
  const highHalf = simd(0x0d, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  const f64Zero = [0x44, 0, 0, 0, 0, 0, 0, 0, 0];
  // Parameters 0 q, 1 v, 2 bytes; locals 3 i, 4 p, 5 x, 6 dLo, 7 dHi, 8 nLo, 9 nHi, 10 dot, 11 nn.
  const accumulate = (acc: number, high: boolean) => [
    ...get(acc),
    ...get(4),
    ...(high ? [...get(4), ...highHalf] : []),
    ...promoteLow,
    ...f64x2Add,
    ...set(acc),
  ];
  const code = [
    ...vec([
      [...leb(1), I32],
      [...leb(6), V128],
      [...leb(2), F64],
    ]),
    0x03,
    0x40, // loop
    ...get(1),
    ...get(3),
    0x6a,
    ...load,
    ...set(5),
    ...get(5),
    ...get(0),
    ...get(3),
    0x6a,
    ...load,
    ...f32x4Mul,
    ...set(4),
    ...accumulate(6, false),
    ...accumulate(7, true),
    ...get(5),
    ...get(5),
    ...f32x4Mul,
    ...set(4),
    ...accumulate(8, false),
    ...accumulate(9, true),
    ...get(3),
    0x41,
    16,
    0x6a,
    ...tee(3),
    ...get(2),
    0x49,
    0x0d,
    0, // i += 16; br_if (i < bytes) loop
    0x0b,
    ...get(6),
    ...get(7),
    ...f64x2Add,
    ...set(6),
    ...get(8),
    ...get(9),
    ...f64x2Add,
    ...set(8),
    ...get(6),
    ...lane(0),
    ...get(6),
    ...lane(1),
    0xa0,
    ...set(10),
    ...get(8),
    ...lane(0),
    ...get(8),
    ...lane(1),
    0xa0,
    ...set(11),
    ...get(10),
    ...get(11),
    0x9f,
    0xa3,
    ...f64Zero,
    ...get(11),
    ...f64Zero,
    0x64,
    0x1b, // select(dot / sqrt(nn), 0, nn > 0)
    0x0b,
  ];
  const bytes = Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, vec([[0x60, ...leb(3), I32, I32, I32, ...leb(1), F64]])),
    ...section(3, vec([[0]])),
    ...section(5, vec([[0x00, 1]])),
    ...section(
      7,
      vec([
        [...str('cos'), 0x00, 0],
        [...str('memory'), 0x02, 0],
      ]),
    ),
    ...section(10, vec([[...leb(code.length), ...code]])),
  ]);
  try {
    if (!WebAssembly.validate(bytes)) return null;
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes));
    return exports as unknown as { cos: (q: number, v: number, bytes: number) => number; memory: WebAssembly.Memory };
  } catch {
    return null;
  }
}

const wasm = simdCosine();
let wasmFloats = wasm ? new Float32Array(wasm.memory.buffer) : new Float32Array(0);

/** Scores of `vectors` against `query`: WebAssembly when it applies, else the scalar loop. */
function cosines(query: Float32Array, qInv: number, vectors: Float32Array[], out: Float64Array): void {
  const dims = query.length;
  if (!wasm || dims % 4 !== 0 || dims === 0) {
    for (let j = 0; j < vectors.length; j++) out[j] = cosineScalar(query, qInv, vectors[j]!);
    return;
  }
  if (wasmFloats.length < 2 * dims) {
    wasm.memory.grow(Math.ceil((2 * dims * 4 - wasm.memory.buffer.byteLength) / 65536));
    wasmFloats = new Float32Array(wasm.memory.buffer);
  }
  wasmFloats.set(query, 0);
  const bytes = dims * 4;
  for (let j = 0; j < vectors.length; j++) {
    wasmFloats.set(vectors[j]!, dims);
    out[j] = wasm.cos(0, bytes, bytes) * qInv;
  }
}

/** Exact cosine similarity of each candidate whose float32 vector `vectorOf` knows (the database's; a key
 * without one was deleted and is dropped), best first, at most k. */
export function rescore(
  query: Float32Array,
  keys: ArrayLike<bigint>,
  vectorOf: (key: bigint) => Float32Array | undefined,
  k: number,
): Array<{ key: bigint; score: number }> {
  const dims = query.length;
  let qn = 0;
  for (let d = 0; d < dims; d++) qn += query[d]! * query[d]!;
  const qInv = qn > 0 ? 1 / Math.sqrt(qn) : 0;
  const ks: bigint[] = [];
  const vs: Float32Array[] = [];
  for (let j = 0; j < keys.length; j++) {
    const key = keys[j]!;
    const v = vectorOf(key);
    if (!v || v.length !== dims) continue;
    ks.push(key);
    vs.push(v);
  }
  const scores = new Float64Array(ks.length);
  cosines(query, qInv, vs, scores);
  // Partial selection: k is small next to the candidates, and a comparator sort costs more than the scoring.
  const m = ks.length;
  const order = Array.from({ length: m }, (_, i) => i);
  const out: Array<{ key: bigint; score: number }> = [];
  for (let r = 0; r < Math.min(k, m); r++) {
    let best = r;
    for (let j = r + 1; j < m; j++) if (scores[order[j]!]! > scores[order[best]!]!) best = j;
    const b = order[best]!;
    order[best] = order[r]!;
    order[r] = b;
    out.push({ key: ks[b]!, score: scores[b]! });
  }
  return out;
}
