// The MQTT bench's verdict on lag (docs/mqtt.md, "Cost"): whether the rounds with MQTT on are slower than the
// rounds without by more than chance explains. The rounds come in pairs, one round of each mode, and the mode
// of a pair's first round is drawn at random (`pairedOrder`), so under "publishing costs nothing" every pair's
// on / off ratio is as likely to be its inverse: the exact sign-flip (randomization) test below is then valid
// whatever the machine's other load does over the run, since that load cannot know the draw. Pairs of
// adjacent rounds share most of that load, which a comparison of all on rounds with all off rounds would not.

/** Modes of the rounds in pairs, each pair one of each in a random order (`random` in [0, 1)). */
export function pairedOrder<M>(pairs: number, a: M, b: M, random: () => number = Math.random): M[] {
  const out: M[] = [];
  for (let i = 0; i < pairs; i++) out.push(...(random() < 0.5 ? [a, b] : [b, a]));
  return out;
}

export interface PairedVerdict {
  /** Pairs compared. */
  pairs: number;
  /** Geometric mean over the pairs of on / off. */
  ratio: number;
  /** One-sided exact p-value: the share of the 2^pairs sign assignments whose mean log ratio is at least the one seen. */
  p: number;
  /** Whether on is not worse than off by more than chance explains (p at least `alpha`). */
  within: boolean;
  /** The smallest p the test can give with this many pairs (1 / 2^pairs): with 4 pairs or fewer it cannot reach 0.05. */
  p_min: number;
}

/**
 * Exact one-sided sign-flip test of `on[i]` against `off[i]` (higher is worse, e.g. lag), on log ratios so that
 * a cost in proportion to the lag weighs the same in a quiet pair as in a loaded one.
 */
export function pairedVerdict(on: number[], off: number[], alpha = 0.05): PairedVerdict {
  if (on.length !== off.length || on.length === 0) throw new Error('pairedVerdict: one on and one off value a pair');
  if (on.length > 20) throw new Error('pairedVerdict: at most 20 pairs (the test enumerates 2^pairs signs)');
  const d = on.map((x, i) => Math.log(x / off[i]!));
  const n = d.length;
  const sum = (signs: number) => d.reduce((s, x, i) => s + ((signs >> i) & 1 ? -x : x), 0);
  const seen = sum(0);
  // A tolerance so that sign assignments equal to the one seen count as at least it despite rounding.
  const eps = 1e-9 * (1 + d.reduce((s, x) => s + Math.abs(x), 0));
  let atLeast = 0;
  for (let signs = 0; signs < 1 << n; signs++) if (sum(signs) >= seen - eps) atLeast++;
  const p = atLeast / (1 << n);
  return { pairs: n, ratio: Math.exp(seen / n), p, within: p >= alpha, p_min: 1 / (1 << n) };
}
