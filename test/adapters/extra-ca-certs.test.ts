// NODE_EXTRA_CA_CERTS read at the first TLS context (functions/adapters/extra-ca-certs.ts), against an https
// server on 127.0.0.1 whose certificate no public CA signed. The wrap is this test file's own (its own worker's
// node:tls) and is undone after each test.
import { readFileSync, writeFileSync } from 'node:fs';
import { get, createServer as httpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXTRA_CA_HANDOFF, trustExtraCaCerts, type Untrust } from '../../functions/adapters/extra-ca-certs.ts';
import { makeTempDir } from '../support/cli-process.ts';
import { selfSignedCert } from '../support/self-signed-cert.ts';

const dir = makeTempDir('extra-ca-certs');
const { cert, key } = selfSignedCert(dir);
const other = selfSignedCert(dir, 'other');
let server: Server;
let url: string;
let untrust: Untrust = () => {};

beforeAll(async () => {
  server = httpsServer({ cert: readFileSync(cert), key: readFileSync(key) }, (_req, res) => res.end('secure'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => untrust());

/** A GET with Node's https client (a new connection each time): the body, or the TLS error's code. */
const fetchOver = (options: { ca?: string } = {}): Promise<string> =>
  new Promise((resolve) => {
    get(url, { ...options, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      res.on('end', () => resolve(body));
    }).on('error', (error: NodeJS.ErrnoException) => resolve(String(error.code)));
  });

const handoff = (file: string) => {
  const env: NodeJS.ProcessEnv = { [EXTRA_CA_HANDOFF]: file };
  const warnings: string[] = [];
  untrust = trustExtraCaCerts(env, (text) => warnings.push(text));
  return { env, warnings };
};

describe('NODE_EXTRA_CA_CERTS handed over by the bin', () => {
  it('puts the variable back for the programs the process starts, and trusts its certificates beside the bundled roots', async () => {
    expect(await fetchOver()).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    const { env, warnings } = handoff(cert);
    expect(env).toEqual({ NODE_EXTRA_CA_CERTS: cert });
    expect(await fetchOver()).toBe('secure');
    // The bundled roots stay: a context without `ca` trusts them as Node's default one does.
    const context = tls.createSecureContext();
    expect(tls.createSecureContext()).toBe(context);
    expect(warnings).toEqual([]);
    untrust();
    expect(await fetchOver()).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('leaves a `ca` given explicitly alone, as Node does with the variable', async () => {
    handoff(cert);
    expect(await fetchOver({ ca: readFileSync(other.cert, 'utf8') })).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(await fetchOver({ ca: readFileSync(cert, 'utf8') })).toBe('secure');
  });

  it('shares one context among connections with no option that shapes one, and makes one for those with', () => {
    handoff(cert);
    const shared = tls.createSecureContext({});
    expect(tls.createSecureContext(undefined)).toBe(shared);
    const shaped = tls.createSecureContext({ minVersion: 'TLSv1.3' });
    expect(shaped).not.toBe(shared);
  });

  it('reads the file at the first TLS context, not when handed over', async () => {
    const later = join(dir, 'later.pem');
    const { warnings } = handoff(later);
    writeFileSync(later, readFileSync(cert));
    expect(await fetchOver()).toBe('secure');
    expect(warnings).toEqual([]);
  });

  it("warns once, in Node's words, when the file cannot be read, and trusts the bundled roots alone", async () => {
    const missing = join(dir, 'no-such-bundle.pem');
    const { warnings } = handoff(missing);
    expect(await fetchOver()).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(await fetchOver()).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(warnings).toEqual([`Warning: Ignoring extra certs from \`${missing}\`, load failed: ENOENT: no such file or directory, open '${missing}'\n`]);
  });

  it('changes nothing without a handoff, nor for an empty one', () => {
    const original = tls.createSecureContext;
    const env: NodeJS.ProcessEnv = {};
    untrust = trustExtraCaCerts(env, () => {});
    expect(tls.createSecureContext).toBe(original);
    expect(env).toEqual({});
    const empty: NodeJS.ProcessEnv = { [EXTRA_CA_HANDOFF]: '' };
    untrust = trustExtraCaCerts(empty, () => {});
    expect(tls.createSecureContext).toBe(original);
    expect(empty).toEqual({ NODE_EXTRA_CA_CERTS: '' });
  });
});
