// Opening a task's video: a staged file path as is, a URL only under the media URL policy. FFmpeg never
// resolves, connects or follows a redirect for an http(s) input: every byte of it (and of every playlist,
// segment and redirect it leads to) comes through the guarded network path (src/media/guarded-source.ts),
// which checks each URL and connects only to the addresses it checked. An rtsp input is resolved and checked
// here, once, and FFmpeg reaches it only through a loopback relay bound to that address
// (src/media/rtsp-relay.ts), which refuses the server's redirects.
import { errors } from '../../base/errors.js';
import { SourceChangedError, type GuardedSourceOptions, type SourceIdentity } from '../../media/guarded-source.js';
import { startRtspRelay } from '../../media/rtsp-relay.js';
import { checkUrl, resolveHost, resolveOnce, type Resolver, type UrlPolicy } from '../../media/url-policy.js';
import { ProviderError } from '../task-contract.js';
import { VideoDecoder, type DecoderOptions } from './decoder.js';
import { VIDEO_URL_SCHEMES } from '../task-contract.js';

const PARAM = 'input[0].url';
const SCHEMES: readonly string[] = VIDEO_URL_SCHEMES;

const asPolicy = (p: boolean | UrlPolicy): UrlPolicy => (typeof p === 'boolean' ? { allowPrivate: p } : p);

/**
 * Throws urlNotAllowed (400) for a URL whose host is or resolves to a refused address, a ProviderError when it
 * does not resolve. Resolves with the checked addresses (absent when the policy allows every address).
 */
export async function checkVideoUrl(
  url: string,
  policy: boolean | UrlPolicy,
  provider = 'local',
  resolve: Resolver = resolveHost,
): Promise<readonly string[] | undefined> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw errors.invalidParam(
      PARAM,
      `Expected an http(s) or rtsp(s) URL for ${PARAM} but received ${JSON.stringify(url.slice(0, 200))}`,
    );
  }
  if (!SCHEMES.includes(u.protocol)) {
    throw errors.invalidParam(
      PARAM,
      `Expected an http(s) or rtsp(s) URL for ${PARAM} but received the scheme ${u.protocol}`,
    );
  }
  const verdict = await checkUrl(u, asPolicy(policy), resolve, { schemes: SCHEMES });
  if (verdict.allowed) return verdict.addresses;
  if (verdict.reason === 'unresolved') {
    // Denied either way; a resolver hiccup is worth a retry on another provider (a name that does not exist
    // fails there too), so it is a provider error rather than the submit-time 400.
    const cause = verdict.cause instanceof Error ? verdict.cause.message : verdict.detail;
    throw new ProviderError(provider, `The video URL's host ${verdict.host} could not be resolved: ${cause}`);
  }
  throw errors.urlNotAllowed(PARAM, verdict.detail);
}

export interface VideoNetwork {
  policy: UrlPolicy;
  /** DNS seam for tests. */
  resolve?: Resolver;
  /** Limits of the guarded path (playlist size, request rate); defaults in src/media/guarded-source.ts. */
  limits?: Omit<GuardedSourceOptions, 'policy' | 'resolve' | 'param' | 'expect'>;
  /** A continued task's http(s) input must still be this resource (its checkpoint's), else source_changed. */
  expect?: SourceIdentity;
}

/** Opens the source for decoding; a URL only under `network.policy` (a boolean: allow private addresses or not). */
export async function openVideo(
  source: { path?: string; url?: string },
  network: boolean | VideoNetwork,
  options: DecoderOptions,
): Promise<VideoDecoder> {
  if (source.path) return VideoDecoder.open(source.path, options);
  if (!source.url) throw errors.invalidParam(PARAM, `Expected a video URL for ${PARAM} but received nothing`);
  const net: VideoNetwork = typeof network === 'boolean' ? { policy: { allowPrivate: network } } : network;
  // Each host is resolved once for the whole job: the check here, and every request the decoder makes.
  const resolve = resolveOnce(net.resolve ?? resolveHost);
  // Checked here too so a refusal is the same 400 before any byte moves; the guarded path checks again.
  const addresses = await checkVideoUrl(source.url, net.policy, 'local', resolve);
  const url = new URL(source.url);
  if (url.protocol === 'rtsp:' || url.protocol === 'rtsps:') return openRtsp(url, addresses, resolve, options);
  try {
    return await VideoDecoder.open(source.url, {
      ...options,
      network: {
        ...net.limits,
        policy: net.policy,
        resolve,
        param: PARAM,
        ...(net.expect ? { expect: net.expect } : {}),
      },
    });
  } catch (e) {
    // Never decoded: the bytes are not those the checkpoint was taken from, so the task cannot continue.
    if (e instanceof SourceChangedError) throw new ProviderError('local', e.message, undefined, 'source_changed');
    throw e;
  }
}

async function openRtsp(
  url: URL,
  checked: readonly string[] | undefined,
  resolve: Resolver,
  options: DecoderOptions,
): Promise<VideoDecoder> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A policy that allows everything checked nothing; the relay still needs one address to pin.
  const address = checked?.[0] ?? (await resolve(host).catch(() => [] as string[]))[0];
  if (!address) throw new ProviderError('local', `The video URL's host ${host} could not be resolved`);
  const relay = await startRtspRelay(url, address);
  try {
    const decoder = await VideoDecoder.open(relay.url, { ...options, onClosed: () => void relay.close() });
    return decoder;
  } catch (e) {
    await relay.close();
    if (relay.refusal) throw errors.urlNotAllowed(PARAM, relay.refusal);
    throw e;
  }
}
