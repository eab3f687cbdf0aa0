// Opening a task's video: a staged file path as is, a URL only under the media URL policy (checkUrl).
// FFmpeg resolves and connects by itself (and follows redirects with no way to refuse them), so the policy is
// applied around it: every address the URL's host resolves to is checked before FFmpeg opens it, and the URL
// FFmpeg ended at (info.finalUrl) is checked again after open, aborting the decoder on a refusal. What remains
// is DNS rebinding between our lookup and FFmpeg's; SIGHTFLOW_ALLOW_PRIVATE_URLS=false plus an egress
// firewall is the complete answer there.
import { errors } from '../../errors.js';
import { checkUrl } from '../../media/url-policy.js';
import { ProviderError } from '../provider.js';
import { VideoDecoder, type DecoderOptions } from '../decoder.js';
import { VIDEO_URL_SCHEMES } from '../schemas.js';

const PARAM = 'input[0].url';

/** Throws urlNotAllowed (400) for a URL whose host is or resolves to a refused address, a ProviderError when it does not resolve. */
export async function checkVideoUrl(url: string, allowPrivate: boolean, provider = 'local'): Promise<void> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw errors.invalidParam(PARAM, `Expected an http(s) or rtsp(s) URL for ${PARAM} but received ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (!(VIDEO_URL_SCHEMES as readonly string[]).includes(u.protocol)) {
    throw errors.invalidParam(PARAM, `Expected an http(s) or rtsp(s) URL for ${PARAM} but received the scheme ${u.protocol}`);
  }
  const verdict = await checkUrl(u, { allowPrivate, schemes: VIDEO_URL_SCHEMES });
  if (verdict.allowed) return;
  if (verdict.reason === 'unresolved') {
    // Denied either way; a resolver hiccup is worth a retry on another provider (a name that does not exist
    // fails there too), so it is a provider error rather than the submit-time 400.
    const cause = verdict.cause instanceof Error ? verdict.cause.message : verdict.detail;
    throw new ProviderError(provider, `The video URL's host ${verdict.host} could not be resolved: ${cause}`);
  }
  throw errors.urlNotAllowed(PARAM, verdict.detail);
}

/** Opens the source for decoding; a URL is checked before and its final URL after FFmpeg opened it. */
export async function openVideo(source: { path?: string; url?: string }, allowPrivate: boolean, options: DecoderOptions): Promise<VideoDecoder> {
  if (source.path) return VideoDecoder.open(source.path, options);
  if (!source.url) throw errors.invalidParam(PARAM, `Expected a video URL for ${PARAM} but received nothing`);
  await checkVideoUrl(source.url, allowPrivate);
  const decoder = await VideoDecoder.open(source.url, options);
  if (decoder.info.finalUrl && decoder.info.finalUrl !== source.url) {
    try {
      await checkVideoUrl(decoder.info.finalUrl, allowPrivate);
    } catch (e) {
      await decoder.abort();
      throw e;
    }
  }
  return decoder;
}
