// Detect on a photo far larger than the model's input: the service decodes the JPEG smaller (1/2 here, the
// decoder's own shrink) and answers boxes in the file's pixels, the objects a full decode finds, and usage on
// the file's size. Real services, the built-in detector, a COCO photo enlarged 4x and written as a JPEG.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { openTestServices, type TestServices } from '../helpers/app.js';
import { carPhoto, cocoSkip } from '../helpers/eval-data.js';
import { withOrientation } from '../helpers/exif.js';
import { VisionService } from '../../src/vision/vision.service.js';
import { decodeToRgb } from '../../src/media/image-decode.js';
import { requestPixels } from '../../src/media/pixel-pool.js';
import { iou } from '../../src/detection/yolo.js';
import { autoDetail, imageTokens } from '../../src/usage/tokens.js';

let t: TestServices;
before(async () => {
  t = await openTestServices();
  await t.s.models.ready;
});
after(async () => {
  await t?.close();
});

test('a 2560x1920 JPEG: decoded at half size, the objects of a full decode in the file pixels, usage on the file', {
  skip: cocoSkip,
}, async () => {
  const bytes = await sharp(carPhoto()!).resize(2560, 1920, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
  const vision = new VisionService(t.s);
  const idle = requestPixels.idle;
  const answer = await vision.detect(t.caller(), { image_base64: bytes.toString('base64'), confidence_threshold: 0.4 });
  // The pooled memory the request gave back is the half-size image's: 1280 x 960 x 3 bytes, not 2560 x 1920 x 3.
  assert.deepEqual(requestPixels.idle, { buffers: idle.buffers + 1, bytes: idle.bytes + 1280 * 960 * 3 });
  assert.equal(answer.usage.input_tokens, imageTokens(2560, 1920, autoDetail(2560, 1920)));

  // What the caller's own code gets: the whole file decoded, then the detector (it resizes it itself).
  const detector = await t.s.taskModels.readyDetector(5000, 'centernet-coco');
  const whole = await decodeToRgb(bytes, 'jpeg', 'image', 1e8);
  assert.equal(whole.shrunk, undefined);
  const expected = await detector.detect(whole, { confidence_threshold: 0.4 });
  assert.ok(expected.some((o) => o.class === 'car') && expected.some((o) => o.class === 'train'), 'the photo has both');
  assert.deepEqual(answer.objects.map((o) => o.class).sort(), expected.map((o) => o.class).sort());
  for (const o of answer.objects) {
    const [x0, y0, x1, y1] = o.bbox;
    assert.ok(x0 >= 0 && y0 >= 0 && x1 <= 2560 && y1 <= 1920 && x1 > x0 && y1 > y0, `${o.class} inside the file`);
    const best = Math.max(...expected.filter((e) => e.class === o.class).map((e) => iou(e.bbox, o.bbox)));
    assert.ok(best > 0.9, `${o.class}: IoU ${best.toFixed(3)} with the full decode's box`);
    // Scores move a little with the pixels, not more.
    const score = expected.find((e) => e.class === o.class && iou(e.bbox, o.bbox) === best)!.confidence;
    assert.ok(Math.abs(score - o.confidence) < 0.05, `${o.class}: ${o.confidence} against ${score}`);
  }
});

test('the same photo stored turned (EXIF orientation 8): upright boxes in the file pixels, decoded at half size', {
  skip: cocoSkip,
}, async () => {
  const upright = await sharp(carPhoto()!).resize(2560, 1920, { fit: 'fill' }).raw().toBuffer();
  // Stored turned a quarter clockwise, so a viewer turns it back (orientation 8), as a camera held on its side
  // writes it; the EXIF block alone, no profile.
  const stored = await sharp(upright, { raw: { width: 2560, height: 1920, channels: 3 } })
    .rotate(90)
    .jpeg({ quality: 90 })
    .toBuffer();
  const bytes = withOrientation(stored, 8);
  const vision = new VisionService(t.s);
  const idle = requestPixels.idle;
  const answer = await vision.detect(t.caller(), { image_base64: bytes.toString('base64'), confidence_threshold: 0.4 });
  // Half-size memory: the pool's own from the test above, or a new buffer of that size; a whole decode's
  // 2560 x 1920 x 3 bytes would have been new memory of that size.
  assert.ok(requestPixels.idle.bytes - idle.bytes <= 1280 * 960 * 3, 'decoded at half size');
  assert.equal(answer.usage.input_tokens, imageTokens(2560, 1920, autoDetail(2560, 1920)));
  const detector = await t.s.taskModels.readyDetector(5000, 'centernet-coco');
  const whole = await decodeToRgb(bytes, 'jpeg', 'image', 1e8);
  assert.deepEqual([whole.width, whole.height], [2560, 1920], 'upright');
  const expected = await detector.detect(whole, { confidence_threshold: 0.4 });
  assert.deepEqual(answer.objects.map((o) => o.class).sort(), expected.map((o) => o.class).sort());
  for (const o of answer.objects) {
    const best = Math.max(...expected.filter((e) => e.class === o.class).map((e) => iou(e.bbox, o.bbox)));
    assert.ok(best > 0.9, `${o.class}: IoU ${best.toFixed(3)} with the full decode's upright box`);
  }
});
