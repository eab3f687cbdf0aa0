// checkUrl, the one URL policy of image, audio and video inputs: the address classes it refuses, host names
// judged on every address they resolve to, a DNS failure denied, allow-private; then the callers (image input,
// a vector audio item, video submit and the video worker) reaching the same decision for the same URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { lookup } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { ApiError } from '../../src/base/errors.js';
import { loadImage, parseImageInput } from '../../src/media/image-input.js';
import { loadConfig } from '../../src/config/index.js';
import { checkUrl, type Resolver, type UrlPolicy, type UrlVerdict } from '../../src/media/url-policy.js';
import type { Services } from '../../src/services/services.js';
import { loadContent, parseContent } from '../../src/vectors/item-input.js';
import { checkVideoUrl } from '../../src/video/source/video-source.js';
import { ProviderError } from '../../src/video/task-contract.js';
import type { ProcessBody } from '../../src/video/schemas.js';
import { stageInput } from '../../src/video/tasks/task-input.js';

const strict: UrlPolicy = { allowPrivate: false };
const open: UrlPolicy = { allowPrivate: true };

/** A fake DNS: names below resolve as listed, every other name fails like getaddrinfo. */
const ZONE: Record<string, string[]> = {
  'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'intranet.example': ['10.0.0.5'],
  'metadata.example': ['169.254.169.254'],
  'ula.example': ['fd00::5'],
  'mixed.example': ['93.184.216.34', '192.168.1.10'],
  'empty.example': [],
};
const asked: string[] = [];
const fakeDns: Resolver = async (host) => {
  asked.push(host);
  const a = ZONE[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a;
};

const refused = (host: string, detail: string): UrlVerdict => ({ allowed: false, host, reason: 'refused', detail });
const allowed = (host: string, addresses?: string[]): UrlVerdict => ({
  allowed: true,
  host,
  ...(addresses ? { addresses } : {}),
});

/** [url, verdict under the strict policy]; every one of them is allowed with allowPrivate. */
const CASES: Array<[string, UrlVerdict]> = [
  ['http://127.0.0.1/a', refused('127.0.0.1', '127.0.0.1 is loopback')],
  ['http://127.9.9.9:8080/a', refused('127.9.9.9', '127.9.9.9 is loopback')],
  ['http://2130706433/a', refused('127.0.0.1', '127.0.0.1 is loopback')],
  ['http://10.1.2.3/a', refused('10.1.2.3', '10.1.2.3 is private')],
  ['http://172.16.0.1/a', refused('172.16.0.1', '172.16.0.1 is private')],
  ['http://192.168.1.1/a', refused('192.168.1.1', '192.168.1.1 is private')],
  ['http://169.254.1.1/a', refused('169.254.1.1', '169.254.1.1 is link-local / metadata')],
  ['http://169.254.169.254/latest/meta-data/', refused('169.254.169.254', '169.254.169.254 is link-local / metadata')],
  ['http://100.64.0.1/a', refused('100.64.0.1', '100.64.0.1 is carrier-grade NAT')],
  ['http://100.127.255.254/a', refused('100.127.255.254', '100.127.255.254 is carrier-grade NAT')],
  ['http://224.0.0.1/a', refused('224.0.0.1', '224.0.0.1 is multicast')],
  ['http://239.255.255.250/a', refused('239.255.255.250', '239.255.255.250 is multicast')],
  ['http://0.0.0.0/a', refused('0.0.0.0', '0.0.0.0 is this-network')],
  ['http://[::1]/a', refused('::1', '::1 is loopback')],
  ['http://[fd12:3456::1]/a', refused('fd12:3456::1', 'fd12:3456::1 is unique local (private)')],
  ['http://[fc00::1]/a', refused('fc00::1', 'fc00::1 is unique local (private)')],
  ['http://[fe80::1]/a', refused('fe80::1', 'fe80::1 is link-local')],
  ['http://[ff02::1]/a', refused('ff02::1', 'ff02::1 is multicast')],
  ['http://[::ffff:127.0.0.1]/a', refused('::ffff:7f00:1', '::ffff:7f00:1 is IPv4-mapped loopback')],
  ['http://[::ffff:10.0.0.1]/a', refused('::ffff:a00:1', '::ffff:a00:1 is IPv4-mapped private')],
  [
    'http://[::ffff:169.254.169.254]/a',
    refused('::ffff:a9fe:a9fe', '::ffff:a9fe:a9fe is IPv4-mapped link-local / metadata'),
  ],
  ['http://intranet.example/a', refused('intranet.example', 'intranet.example resolves to 10.0.0.5 (private)')],
  [
    'http://metadata.example/a',
    refused('metadata.example', 'metadata.example resolves to 169.254.169.254 (link-local / metadata)'),
  ],
  ['http://ula.example/a', refused('ula.example', 'ula.example resolves to fd00::5 (unique local (private))')],
  // One refused address is enough: whoever connects may pick any of them.
  ['https://mixed.example/a', refused('mixed.example', 'mixed.example resolves to 192.168.1.10 (private)')],
  ['ftp://public.example/a', refused('public.example', 'the scheme ftp is not allowed')],
  ['https://public.example/a', allowed('public.example', ZONE['public.example'])],
  ['http://8.8.8.8/a', allowed('8.8.8.8', ['8.8.8.8'])],
  ['http://100.128.0.1/a', allowed('100.128.0.1', ['100.128.0.1'])],
  ['https://[2606:4700::1111]/a', allowed('2606:4700::1111', ['2606:4700::1111'])],
];

test('checkUrl refuses every non-public address class, literal or resolved', async () => {
  for (const [url, expected] of CASES) assert.deepEqual(await checkUrl(url, strict, fakeDns), expected, url);
  assert.deepEqual(
    await checkUrl(new URL('http://[::1]:9/x'), strict, fakeDns),
    refused('::1', '::1 is loopback'),
    'a URL object too',
  );
});

test('a DNS failure or an empty answer is a denial: an address that cannot be checked is not allowed', async () => {
  const failed = await checkUrl('http://no-such.example/a', strict, fakeDns);
  assert.equal(failed.allowed, false);
  assert.ok(
    !failed.allowed && failed.reason === 'unresolved' && failed.detail === 'could not resolve host no-such.example',
  );
  assert.match(String((failed as { cause?: Error }).cause?.message), /ENOTFOUND no-such\.example/);
  assert.deepEqual(await checkUrl('http://empty.example/a', strict, fakeDns), {
    allowed: false,
    host: 'empty.example',
    reason: 'unresolved',
    detail: 'could not resolve host empty.example',
  });
});

test('allowPrivate allows every address without asking DNS; allowAddresses lets exact addresses through', async () => {
  asked.length = 0;
  for (const [url, expected] of CASES) {
    if (url.startsWith('ftp:'))
      assert.deepEqual(await checkUrl(url, open, fakeDns), expected, 'the scheme rule holds regardless');
    else assert.deepEqual(await checkUrl(url, open, fakeDns), allowed(expected.host), url);
  }
  assert.deepEqual(
    await checkUrl('http://no-such.example/a', open, fakeDns),
    allowed('no-such.example'),
    'resolution is left to the connection',
  );
  assert.deepEqual(asked, []);
  assert.deepEqual(
    await checkUrl('http://intranet.example/a', { allowPrivate: false, allowAddresses: ['10.0.0.5'] }, fakeDns),
    allowed('intranet.example', ['10.0.0.5']),
  );
  assert.deepEqual(
    await checkUrl('http://10.0.0.6/a', { allowPrivate: false, allowAddresses: ['10.0.0.5'] }, fakeDns),
    refused('10.0.0.6', '10.0.0.6 is private'),
  );
});

test('the real resolver: localhost resolves to loopback, a .invalid name does not resolve', async () => {
  const first = (await lookup('localhost', { all: true, verbatim: true }))[0]!.address;
  const local = await checkUrl('http://localhost:9/a', strict);
  assert.ok(
    !local.allowed && local.reason === 'refused' && local.detail.startsWith(`localhost resolves to ${first} (`),
    JSON.stringify(local),
  );
  const missing = await checkUrl('http://no-such-host.invalid/a', strict);
  assert.ok(!missing.allowed && missing.reason === 'unresolved', JSON.stringify(missing));
});

test('SIGHTFLOW_ALLOW_PRIVATE_URLS: true and 1 both mean true; another word stops the start', () => {
  for (const [v, want] of [
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
    ['', false],
    [undefined, false],
  ] as const) {
    assert.equal(
      loadConfig(v === undefined ? {} : { SIGHTFLOW_ALLOW_PRIVATE_URLS: v }).allowPrivateUrls,
      want,
      String(v),
    );
  }
  assert.throws(
    () => loadConfig({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'yes' }),
    /SIGHTFLOW_ALLOW_PRIVATE_URLS must be one of true, false, 1, 0 \(got "yes"\)/,
  );
});

// ---- the callers ----

let server: http.Server;
let port = 0;
const hits: string[] = [];
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), Buffer.alloc(32)]);

before(async () => {
  const png = await sharp({ create: { width: 4, height: 3, channels: 3, background: 'red' } })
    .png()
    .toBuffer();
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/a.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else if (req.url === '/a.wav') res.writeHead(200, { 'content-type': 'audio/wav' }).end(WAV);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const DENIED_URLS = () => [
  `http://127.0.0.1:${port}/a.png`,
  'http://10.1.2.3/a',
  'http://192.168.0.10/a',
  'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/a',
  'http://224.0.0.1/a',
  `http://[::1]:${port}/a`,
  'http://[fd00::1]/a',
  'http://[fe80::1]/a',
  'http://[::ffff:127.0.0.1]/a',
  `http://localhost:${port}/a.png`,
  'http://no-such-host.invalid/a',
];

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail('expected a rejection');
}

/** The API error every media input gives for a denial: the code by reason, the message worded for the field. */
function expectedError(v: Extract<UrlVerdict, { allowed: false }>, param: string, media: string) {
  return v.reason === 'refused'
    ? {
        type: 'invalid_request_error',
        code: 'url_not_allowed',
        message: `The URL points to a private, loopback or link-local address, which is not allowed: ${v.detail}`,
        param,
      }
    : {
        type: 'invalid_request_error',
        code: 'image_fetch_failed',
        message: `The ${media} URL could not be fetched: ${v.detail}`,
        param,
      };
}

test('image, audio and video callers deny the same URLs with the same reason', async () => {
  // Denied before the store is touched, so the video submit path needs no database here.
  const services = { config: { allowPrivateUrls: false, urlPolicy: strict } } as unknown as Services;
  const videoBody = (url: string) =>
    ({ input: [{ type: 'video_url', url }], steps: [{ model: 'detect' }] }) as unknown as ProcessBody;
  const seen = hits.length;
  for (const url of DENIED_URLS()) {
    const v = await checkUrl(url, strict);
    assert.equal(v.allowed, false, url);
    if (v.allowed) continue;
    const image = await caught(loadImage(parseImageInput({ image: url }), { allowPrivate: false }));
    assert.ok(image instanceof ApiError && image.status === 400, `${url}: ${String(image)}`);
    assert.deepEqual(image.toBody().error, expectedError(v, 'image', 'image'), url);
    const audio = await caught(loadContent(parseContent({ audio: url }, 'items[0].'), { allowPrivate: false }));
    assert.ok(audio instanceof ApiError && audio.status === 400, `${url}: ${String(audio)}`);
    assert.deepEqual(audio.toBody().error, expectedError(v, 'items[0].audio', 'audio'), url);
    const submit = await caught(stageInput(services, { id: 'vt_x', projectId: 'proj_x', keyId: null }, videoBody(url)));
    assert.ok(submit instanceof ApiError && submit.status === 400, `${url}: ${String(submit)}`);
    assert.deepEqual(submit.toBody().error, expectedError(v, 'input[0].url', 'video'), url);
    // The worker denies too; a DNS failure there is a provider error, so another provider may try.
    const worker = await caught(checkVideoUrl(url, false));
    if (v.reason === 'refused') {
      assert.ok(worker instanceof ApiError, `${url}: ${String(worker)}`);
      assert.deepEqual(worker.toBody().error, expectedError(v, 'input[0].url', 'video'), url);
    } else {
      assert.ok(
        worker instanceof ProviderError &&
          worker.message.startsWith(`The video URL's host ${v.host} could not be resolved`),
        String(worker),
      );
    }
  }
  assert.equal(hits.length, seen, 'no denied URL was contacted');
});

test('with allow-private on, image, audio and video callers all accept a loopback URL', async () => {
  const img = await loadImage(parseImageInput({ image: `http://127.0.0.1:${port}/a.png` }), { allowPrivate: true });
  assert.deepEqual([img.width, img.height], [4, 3]);
  const audio = await loadContent(parseContent({ audio: `http://localhost:${port}/a.wav` }, 'items[0].'), {
    allowPrivate: true,
  });
  assert.deepEqual(audio.blob?.bytes, WAV);
  await checkVideoUrl(`http://127.0.0.1:${port}/a.mp4`, true);
  await checkVideoUrl(`http://localhost:${port}/a.mp4`, true);
});

test('an allowed host name is fetched from the addresses checkUrl vetted', async () => {
  // The test server plays a public host: exactly the addresses localhost resolves to are allowed.
  const addresses = (await lookup('localhost', { all: true, verbatim: true })).map((a) => a.address);
  const img = await loadImage(parseImageInput({ image: `http://localhost:${port}/a.png` }), {
    allowPrivate: false,
    allowAddresses: addresses,
  });
  assert.deepEqual([img.format, img.width], ['png', 4]);
});

test('SIGHTFLOW_URL_ALLOW lets blocks through the default deny list; SIGHTFLOW_URL_DENY always wins; bad CIDRs stop the start', async () => {
  const c = loadConfig({
    SIGHTFLOW_URL_ALLOW: '10.0.0.0/8, fd00::/8,127.0.0.1',
    SIGHTFLOW_URL_DENY: '10.9.0.0/16,8.8.8.8',
  });
  const p = c.urlPolicy;
  assert.equal(p.allowPrivate, false);
  assert.deepEqual(
    p.allow?.map((b) => b.text),
    ['10.0.0.0/8', 'fd00::/8', '127.0.0.1'],
  );
  assert.deepEqual(await checkUrl('http://10.1.2.3/a', p, fakeDns), allowed('10.1.2.3', ['10.1.2.3']));
  assert.deepEqual(await checkUrl('http://intranet.example/a', p, fakeDns), allowed('intranet.example', ['10.0.0.5']));
  assert.deepEqual(await checkUrl('http://ula.example/a', p, fakeDns), allowed('ula.example', ['fd00::5']));
  assert.deepEqual(await checkUrl('http://127.0.0.1/a', p, fakeDns), allowed('127.0.0.1', ['127.0.0.1']));
  assert.deepEqual(await checkUrl('http://127.0.0.2/a', p, fakeDns), refused('127.0.0.2', '127.0.0.2 is loopback'));
  // An IPv4-mapped address is the IPv4 address for both lists.
  assert.deepEqual(
    await checkUrl('http://[::ffff:10.1.2.3]/a', p, fakeDns),
    allowed('::ffff:a01:203', ['::ffff:a01:203']),
  );
  assert.deepEqual(
    await checkUrl('http://10.9.1.1/a', p, fakeDns),
    refused('10.9.1.1', '10.9.1.1 is denied by SIGHTFLOW_URL_DENY 10.9.0.0/16'),
  );
  assert.deepEqual(
    await checkUrl('http://8.8.8.8/a', p, fakeDns),
    refused('8.8.8.8', '8.8.8.8 is denied by SIGHTFLOW_URL_DENY 8.8.8.8'),
  );
  // Deny holds with allow-private too, so the host is resolved to apply it.
  const open = loadConfig({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true', SIGHTFLOW_URL_DENY: '169.254.0.0/16' }).urlPolicy;
  assert.deepEqual(
    await checkUrl('http://intranet.example/a', open, fakeDns),
    allowed('intranet.example', ['10.0.0.5']),
  );
  assert.deepEqual(
    await checkUrl('http://metadata.example/a', open, fakeDns),
    refused(
      'metadata.example',
      'metadata.example resolves to 169.254.169.254 (denied by SIGHTFLOW_URL_DENY 169.254.0.0/16)',
    ),
  );
  for (const [name, value] of [
    ['SIGHTFLOW_URL_ALLOW', '10.0.0.0/33'],
    ['SIGHTFLOW_URL_DENY', 'example.com'],
    ['SIGHTFLOW_URL_ALLOW', '10.0.0.0/'],
  ]) {
    assert.throws(
      () => loadConfig({ [name!]: value }),
      (e: Error) =>
        e.message.startsWith(`invalid configuration: ${name} must be a comma-separated list of CIDR blocks`),
      `${name}=${value}`,
    );
  }
});
