import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** A certificate for 127.0.0.1 that no public CA signed (openssl, EC P-256, valid for a day), and its key. */
export const selfSignedCert = (dir: string, name = 'cert'): { cert: string; key: string } => {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}-key.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
};
