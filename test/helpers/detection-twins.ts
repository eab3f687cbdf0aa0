// Two detectors' answers on the same image compared as sets of confident boxes, with a margin around the
// threshold: each box at or above threshold + margin on one side has a twin on the other (same class, IoU at
// least minIou, score within score). Both lists must go down to threshold - margin, so that a twin whose
// score moved by up to `score` (no more than the margin) is in the other list whichever side it fell.
import assert from 'node:assert/strict';
import { iou } from '../../src/detection/yolo.js';

export interface TwinTolerance {
  threshold: number;
  margin: number;
  score: number;
  minIou: number;
}

/** A box in either form the tests meet: a raw detection or an API object. */
export interface AnyBox {
  classId: number | string;
  score: number;
  box: readonly number[];
}

/** Asserts each side's confident boxes have twins on the other; returns how many confident boxes `a` has. */
export function assertTwins(a: AnyBox[], b: AnyBox[], tol: TwinTolerance, what: string): number {
  assert.ok(tol.score <= tol.margin, 'the score tolerance must fit in the margin');
  const confident = (l: AnyBox[]) => l.filter((d) => d.score >= tol.threshold + tol.margin);
  for (const [from, to, side] of [
    [a, b, 'first'],
    [b, a, 'second'],
  ] as const) {
    for (const x of confident(from)) {
      const twin = to.find(
        (y) => y.classId === x.classId && Math.abs(y.score - x.score) <= tol.score && iou(y.box, x.box) >= tol.minIou,
      );
      assert.ok(
        twin,
        `${what}: no twin for the ${side} side's ${JSON.stringify(x)} among ${JSON.stringify(to.filter((y) => y.classId === x.classId))}`,
      );
    }
  }
  return confident(a).length;
}

/**
 * The same detections one to one: as many boxes, each of `a` paired with its own of `b` (same class, score
 * within 1e-4, IoU at least 0.999). What a batch must answer against runs alone: each row is the image's own
 * computation, equal up to the order of a batched kernel's float sums.
 */
export function assertSameBoxes(a: AnyBox[], b: AnyBox[], what: string): void {
  assert.equal(a.length, b.length, `${what}: ${a.length} boxes against ${b.length}`);
  const left = [...b];
  for (const x of a) {
    const k = left.findIndex(
      (y) => y.classId === x.classId && Math.abs(y.score - x.score) <= 1e-4 && iou(y.box, x.box) >= 0.999,
    );
    assert.ok(k >= 0, `${what}: no twin for ${JSON.stringify(x)} among ${JSON.stringify(left)}`);
    left.splice(k, 1);
  }
}
