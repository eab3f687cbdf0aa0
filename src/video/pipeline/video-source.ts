// Opening a task's video: a staged file path as is, a URL only under the SSRF policy of url-guard.ts.
// FFmpeg resolves and connects by itself (and follows redirects with no way to refuse them), so the policy is
// applied around it: every address the URL's host resolves to is checked before FFmpeg opens it, and the URL
// FFmpeg ended at (info.finalUrl) is checked again after open, aborting the decoder on a refusal. What remains
// is DNS rebinding between our lookup and FFmpeg's; SIGHTFLOW_ALLOW_PRIVATE_URLS=false plus an egress
// firewall is the complete answer there.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { errors } from '../../errors.js';
import { addressRefusal } from '../../vision/url-guard.js';
import { ProviderError } from '../provider.js';
import { VideoDecoder, type DecoderOptions } from '../decoder.js';

const PARAM = 'input[0].url';

/** Throws urlNotAllowed (400) for a URL whose host is or resolves to a refused address. */
export async function checkVideoUrl(url: string, allowPrivate: boolean, provider = 'local'): Promise<void> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw errors.invalidParam(PARAM, `Expected an http(s) URL for ${PARAM} but received ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw errors.invalidParam(PARAM, `Expected an http(s) URL for ${PARAM} but received the scheme ${u.protocol}`);
  }
  if (allowPrivate) return;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (e) {
      // A resolver hiccup is worth a retry on another provider; a name that does not exist fails there too.
      throw new ProviderError(provider, `The video URL's host ${host} could not be resolved: ${(e as Error).message}`);
    }
  }
  for (const a of addresses) {
    const why = addressRefusal(a, { allowPrivate: false });
    if (why) throw errors.urlNotAllowed(PARAM, `${host} resolves to ${a} (${why})`);
  }
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
