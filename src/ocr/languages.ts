// The `language` hint: auto/en/zh are read by PP-OCRv4 (its Chinese+English model); other codes go to
// Tesseract when its traineddata for them is installed; anything else is a 400 naming what is supported.
import { errors } from '../base/errors.js';
import { tesseractInfo } from './tesseract.js';

export type OcrRoute =
  | { engine: 'pp-ocrv4'; hint: 'auto' | 'en' | 'zh' }
  | { engine: 'tesseract'; lang: string; model: string };

/** ISO 639-1 codes to Tesseract traineddata names. */
const TESSERACT_CODES: Record<string, string> = {
  ar: 'ara',
  cs: 'ces',
  da: 'dan',
  de: 'deu',
  el: 'ell',
  es: 'spa',
  fi: 'fin',
  fr: 'fra',
  he: 'heb',
  hi: 'hin',
  hu: 'hun',
  id: 'ind',
  it: 'ita',
  ja: 'jpn',
  ko: 'kor',
  nl: 'nld',
  no: 'nor',
  pl: 'pol',
  pt: 'por',
  ro: 'ron',
  ru: 'rus',
  sv: 'swe',
  th: 'tha',
  tr: 'tur',
  uk: 'ukr',
  vi: 'vie',
};

/** Codes accepted right now (Tesseract's depend on what is installed). */
export async function supportedLanguages(): Promise<string[]> {
  const tess = await tesseractInfo();
  const extra = tess
    ? Object.entries(TESSERACT_CODES)
        .filter(([, t]) => tess.languages.includes(t))
        .map(([c]) => c)
    : [];
  return ['auto', 'en', 'zh', ...extra];
}

export async function routeLanguage(language: string | undefined): Promise<OcrRoute> {
  const code = (language ?? 'auto').trim().toLowerCase();
  // Region and script subtags (en-US, zh-Hans) do not change the model.
  const primary = code.split(/[-_]/)[0];
  if (primary === 'auto' || primary === 'en' || primary === 'zh') return { engine: 'pp-ocrv4', hint: primary };
  const tess = await tesseractInfo();
  const lang = TESSERACT_CODES[primary];
  if (tess && lang && tess.languages.includes(lang)) return { engine: 'tesseract', lang, model: tess.model };
  const supported = await supportedLanguages();
  throw errors.unsupportedLanguage('ocr', language, supported.join(', '));
}
