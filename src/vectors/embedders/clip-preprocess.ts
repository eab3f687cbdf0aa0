// CLIP image preprocessing as HF's CLIPImageProcessor does it: resize so the shorter side is `resize`
// (bicubic; the longer side truncated to an integer), centre crop `size` x `size` (offsets rounded down),
// scale to 0..1, subtract the mean and divide by the std per channel, planar NCHW float32. The resize runs
// in sharp (libvips, antialiased cubic), which matches PIL's bicubic to within a few grey levels.
import sharp from 'sharp';

export interface ClipImageOptions {
  /** Side of the square crop the encoder takes. */
  size: number;
  /** Shorter side after resizing (>= size). */
  resize: number;
  mean: readonly number[];
  std: readonly number[];
}

export interface RgbPixels {
  data: Buffer;
  width: number;
  height: number;
}

/** HF get_resize_output_image_size(default_to_square=False): shorter side to `shortest`, aspect kept. */
export function resizedSize(width: number, height: number, shortest: number): { width: number; height: number } {
  if (width <= height) return { width: shortest, height: Math.floor((shortest * height) / width) };
  return { width: Math.floor((shortest * width) / height), height: shortest };
}

/** The crop's top-left corner in the resized image (HF center_crop). */
export function cropOrigin(width: number, height: number, size: number): { left: number; top: number } {
  return { left: Math.floor((width - size) / 2), top: Math.floor((height - size) / 2) };
}

/** The encoder input for one RGB24 image: [3, size, size] values, channel planes one after another. */
export async function clipPixels(img: RgbPixels, o: ClipImageOptions): Promise<Float32Array> {
  const r = resizedSize(img.width, img.height, o.resize);
  const { left, top } = cropOrigin(r.width, r.height, o.size);
  let p = sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } });
  if (r.width !== img.width || r.height !== img.height)
    p = p.resize(r.width, r.height, { kernel: 'cubic', fit: 'fill' });
  const rgb = await p.extract({ left, top, width: o.size, height: o.size }).raw().toBuffer();
  const plane = o.size * o.size;
  const out = new Float32Array(3 * plane);
  for (let c = 0; c < 3; c++) {
    const m = o.mean[c]!;
    const s = o.std[c]!;
    for (let i = 0; i < plane; i++) out[c * plane + i] = (rgb[i * 3 + c]! / 255 - m) / s;
  }
  return out;
}
