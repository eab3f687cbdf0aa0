// A self-signed certificate made by openssl, as a camera's or a broker's own certificate would be: valid for
// one day, for `san` (a subjectAltName such as `DNS:camera.test` or `IP:127.0.0.1`).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Writes key.pem and cert.pem into `dir`; returns their paths. */
export function selfSignedCert(dir: string, cn: string, san: string): { keyFile: string; certFile: string } {
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      `subjectAltName=${san}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { keyFile, certFile };
}
