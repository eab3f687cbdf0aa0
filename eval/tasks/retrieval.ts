// `npm run eval -- retrieval [--quick] [--json]`: multimodal-embedding-v1 through the HTTP API of a real
// server (startTestApp: port 0, PGlite in a temp dir), on SIGHTFLOW_EVAL_DIR:
//  - text->image: index the photos of retrieval_coco_captions, query with every caption; Recall@1/5/10
//    and MRR of the captioned photo (full ranking: top_k covers the whole collection).
//  - near-duplicate: index the photos plus 4 copies each (centre crop 80%, resize 50%, JPEG quality 40,
//    horizontal flip); query with each original; R@1 = the best hit other than the original itself is
//    one of its copies. copies_r4: share of the 4 copies among the 4 best hits other than itself.
//  - speech/*: clips with reference transcripts. text->audio: index the clips, query with each transcript;
//    audio->text: index the transcripts as text, query with each clip; R@1 of the matching one.
// --quick: 5 photos, 2 clips (one of each speech set).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import sharp from 'sharp';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { api, startTestApp, type TestApp } from '../../test/helpers/app.js';

const round = (v: number) => Math.round(v * 1000) / 1000;

async function collection(t: TestApp, name: string): Promise<string> {
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name } });
  if (r.status !== 201) throw new Error(`create collection: ${r.status} ${r.text}`);
  return r.body.id;
}

async function index(t: TestApp, col: string, items: object[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < items.length; i += 10) {
    const r = await api(t, `/v1/vectors/collections/${col}/index`, {
      method: 'POST',
      json: { items: items.slice(i, i + 10) },
    });
    if (r.status !== 200) throw new Error(`index: ${r.status} ${r.text}`);
    ids.push(...r.body.ids);
  }
  return ids;
}

async function search(t: TestApp, col: string, query: object, topK: number): Promise<string[]> {
  const r = await api(t, `/v1/vectors/collections/${col}/search`, { method: 'POST', json: { ...query, top_k: topK } });
  if (r.status !== 200) throw new Error(`search: ${r.status} ${r.text}`);
  return r.body.results.map((x: { id: string }) => x.id);
}

const b64 = (b: Buffer) => b.toString('base64');

async function augment(bytes: Buffer): Promise<Buffer[]> {
  const img = sharp(bytes).rotate();
  const { width = 0, height = 0 } = await sharp(bytes)
    .rotate()
    .metadata()
    .then((m) => (m.orientation && m.orientation >= 5 ? { width: m.height, height: m.width } : m));
  const cw = Math.round(width * 0.8);
  const ch = Math.round(height * 0.8);
  return Promise.all([
    img
      .clone()
      .extract({ left: Math.floor((width - cw) / 2), top: Math.floor((height - ch) / 2), width: cw, height: ch })
      .jpeg({ quality: 90 })
      .toBuffer(),
    img
      .clone()
      .resize(Math.round(width / 2), Math.round(height / 2))
      .jpeg({ quality: 90 })
      .toBuffer(),
    img.clone().jpeg({ quality: 40 }).toBuffer(),
    img.clone().flop().jpeg({ quality: 90 }).toBuffer(),
  ]);
}

interface Clip {
  path: string;
  transcript: string;
}

/** Every clip under speech/* with its reference text (sphinx "<s> text </s> (id)", LibriSpeech "id TEXT", or <name>.txt). */
function speechClips(dir: string): Clip[] {
  const out: Clip[] = [];
  for (const sub of readdirSync(dir).sort()) {
    const d = join(dir, sub);
    if (!statSync(d).isDirectory()) continue;
    const files = readdirSync(d).sort();
    const refs = new Map<string, string>();
    for (const f of files) {
      if (/transcription$/.test(f)) {
        for (const line of readFileSync(join(d, f), 'utf8').split('\n')) {
          const m = /^\s*(?:<s>)?\s*(.*?)\s*(?:<\/s>)?\s*\(([^)]+)\)\s*$/.exec(line);
          if (m) refs.set(m[2]!, m[1]!);
        }
      } else if (f.endsWith('.trans.txt')) {
        for (const line of readFileSync(join(d, f), 'utf8').split('\n')) {
          const m = /^(\S+)\s+(.+)$/.exec(line.trim());
          if (m) refs.set(m[1]!, m[2]!.toLowerCase());
        }
      }
    }
    for (const f of files) {
      if (!/\.(wav|flac|mp3|ogg)$/i.test(f)) continue;
      const id = basename(f, extname(f));
      const txt = join(d, `${id}.txt`);
      const text = refs.get(id) ?? (existsSync(txt) ? readFileSync(txt, 'utf8').trim() : undefined);
      if (text) out.push({ path: join(d, f), transcript: text });
    }
  }
  return out;
}

export async function run({ quick, json }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'retrieval_coco_captions', 'speech')) return;
  const dir = evalDir('retrieval_coco_captions');
  const speechDir = evalDir('speech');
  const files = readdirSync(join(dir, 'images'))
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort()
    .slice(0, quick ? 5 : undefined);
  const captions = readFileSync(join(dir, 'captions.tsv'), 'utf8')
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter(([f, c]) => f && c && files.includes(f));
  const t = await startTestApp();
  const started = performance.now();
  try {
    // text -> image
    const photos = files.map((f) => readFileSync(join(dir, 'images', f)));
    const col = await collection(t, 'photos');
    const ids = await index(
      t,
      col,
      photos.map((b, i) => ({ image_base64: b64(b), metadata: { file: files[i] } })),
    );
    const fileOf = new Map(ids.map((id, i) => [id, files[i]!]));
    let r1 = 0,
      r5 = 0,
      r10 = 0,
      mrr = 0;
    for (const [file, caption] of captions) {
      const hits = (await search(t, col, { text: caption }, Math.min(100, files.length))).map((id) => fileOf.get(id));
      const rank = hits.indexOf(file);
      if (rank === 0) r1++;
      if (rank >= 0 && rank < 5) r5++;
      if (rank >= 0 && rank < 10) r10++;
      if (rank >= 0) mrr += 1 / (rank + 1);
    }
    const n = captions.length;
    const textToImage = { r1: round(r1 / n), r5: round(r5 / n), r10: round(r10 / n), mrr: round(mrr / n) };
    console.log(
      `text->image: ${n} captions over ${files.length} photos: R@1 ${textToImage.r1} R@5 ${textToImage.r5} R@10 ${textToImage.r10} MRR ${textToImage.mrr}`,
    );

    // near-duplicates
    const dup = await collection(t, 'near-duplicates');
    const items: object[] = [];
    const group: number[] = [];
    for (let i = 0; i < photos.length; i++) {
      items.push({ image_base64: b64(photos[i]!) });
      group.push(i);
      for (const a of await augment(photos[i]!)) {
        items.push({ image_base64: b64(a) });
        group.push(i);
      }
    }
    const dupIds = await index(t, dup, items);
    const groupOf = new Map(dupIds.map((id, i) => [id, group[i]!]));
    let nd1 = 0,
      copies = 0;
    for (let i = 0; i < photos.length; i++) {
      const self = dupIds[i * 5]!;
      const hits = (await search(t, dup, { image_base64: b64(photos[i]!) }, 5)).filter((id) => id !== self);
      if (groupOf.get(hits[0]!) === i) nd1++;
      copies += hits.slice(0, 4).filter((id) => groupOf.get(id) === i).length / 4;
    }
    const nearDuplicate = { r1: round(nd1 / photos.length), copies_r4: round(copies / photos.length) };
    console.log(
      `near-duplicate: ${photos.length} originals, ${dupIds.length} items: R@1 ${nearDuplicate.r1}, copies in top 4 ${nearDuplicate.copies_r4}`,
    );

    // speech
    let clips = speechClips(speechDir);
    if (quick)
      clips = clips
        .filter((c) => c.path.includes('cards'))
        .slice(0, 1)
        .concat(clips.filter((c) => !c.path.includes('cards')).slice(0, 1));
    const audioCol = await collection(t, 'clips');
    const textCol = await collection(t, 'transcripts');
    const audio = clips.map((c) => readFileSync(c.path));
    const audioIds = await index(
      t,
      audioCol,
      audio.map((b) => ({ audio: b64(b) })),
    );
    const textIds = await index(
      t,
      textCol,
      clips.map((c) => ({ text: c.transcript })),
    );
    let t2a = 0,
      a2t = 0,
      t2aMrr = 0,
      a2tMrr = 0;
    // Each clip's own outcome too, so a change is seen clip by clip and not only in the share.
    const perClip: Array<{ clip: string; text_to_audio_rank: number | null; audio_to_text_rank: number | null }> = [];
    for (let i = 0; i < clips.length; i++) {
      // The whole ranking, for the reciprocal rank beside R@1.
      const audioRank = (await search(t, audioCol, { text: clips[i]!.transcript }, clips.length)).indexOf(audioIds[i]!);
      const textRank = (await search(t, textCol, { audio: b64(audio[i]!) }, clips.length)).indexOf(textIds[i]!);
      const toAudio = audioRank === 0;
      const toText = textRank === 0;
      if (toAudio) t2a++;
      if (toText) a2t++;
      if (audioRank >= 0) t2aMrr += 1 / (audioRank + 1);
      if (textRank >= 0) a2tMrr += 1 / (textRank + 1);
      perClip.push({
        clip: basename(clips[i]!.path),
        text_to_audio_rank: audioRank >= 0 ? audioRank + 1 : null,
        audio_to_text_rank: textRank >= 0 ? textRank + 1 : null,
      });
    }
    const textToAudio = { r1: round(t2a / clips.length), mrr: round(t2aMrr / clips.length) };
    const audioToText = { r1: round(a2t / clips.length), mrr: round(a2tMrr / clips.length) };
    console.log(
      `speech: ${clips.length} clips: text->audio R@1 ${textToAudio.r1} MRR ${textToAudio.mrr}, audio->text R@1 ${audioToText.r1} MRR ${audioToText.mrr}`,
    );
    for (const c of perClip.filter((c) => c.text_to_audio_rank !== 1 || c.audio_to_text_rank !== 1))
      console.log(
        `  not first: ${c.clip}: text->audio rank ${c.text_to_audio_rank}, audio->text rank ${c.audio_to_text_rank}`,
      );
    console.log(`(${Math.round((performance.now() - started) / 1000)} s through the HTTP API)`);
    if (json)
      console.log(
        JSON.stringify({
          task: 'retrieval',
          text_to_image: textToImage,
          near_duplicate: nearDuplicate,
          text_to_audio: textToAudio,
          audio_to_text: audioToText,
          clips: perClip,
        }),
      );
  } finally {
    await t.close();
  }
}
