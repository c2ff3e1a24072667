import { readFileSync } from 'node:fs';
import type { createSecureContext, SecureContext, SecureContextOptions } from 'node:tls';

/**
 * NODE_EXTRA_CA_CERTS, read when the process first makes a TLS context instead of before it starts.
 *
 * Node 20 builds its root certificate store and parses every certificate the variable names before any
 * JavaScript runs (~40 ms of every `run` and `resume` on a machine whose environment sets it to a CA bundle),
 * and most commands make no TLS connection at all. So the bin's shell line hands the variable over under
 * EXTRA_CA_HANDOFF instead (Node starts without it), and the CLI calls `trustExtraCaCerts` first thing: it puts
 * the variable back into `process.env` (what the process's children inherit, as before) and wraps
 * `tls.createSecureContext`, through which every TLS client of Node goes (https, fetch's connections, the AWS
 * and Anthropic SDKs): a context asked for without `ca` gets Node's bundled roots plus the file's certificates,
 * as the variable gives them. As with the variable, a `ca` given explicitly replaces both. The file is read at
 * the first such context; one that cannot be read gets Node's warning and the bundled roots alone (text in it
 * that is not a certificate is skipped, as Node skips it). A context with no option that shapes one is made
 * once and shared (as the root store is), so connections do not parse the bundle again each time. Node 20 has
 * no public way to add to its default store (`tls.setDefaultCACertificates` came in Node 24.5).
 */
export const EXTRA_CA_HANDOFF = 'FLOWMEND_EXTRA_CA_CERTS';

/** The options `tls.createSecureContext` reads (Node 20's internal/tls/secure-context.js and _tls_common.js). */
const CONTEXT_OPTIONS = [
  'allowPartialTrustChain',
  'ca',
  'cert',
  'ciphers',
  'clientCertEngine',
  'crl',
  'dhparam',
  'ecdhCurve',
  'honorCipherOrder',
  'key',
  'maxVersion',
  'minVersion',
  'passphrase',
  'pfx',
  'privateKeyEngine',
  'privateKeyIdentifier',
  'secureOptions',
  'secureProtocol',
  'sessionIdContext',
  'sessionTimeout',
  'sigalgs',
  'ticketKeys',
] as const;

/** Undoes the wrap (for tests). */
export type Untrust = () => void;

export const trustExtraCaCerts = (env: NodeJS.ProcessEnv, warn: (text: string) => void): Untrust => {
  const file = env[EXTRA_CA_HANDOFF];
  if (file === undefined) return () => {};
  env.NODE_EXTRA_CA_CERTS = file;
  delete env[EXTRA_CA_HANDOFF];
  if (file === '') return () => {};
  const tls = process.getBuiltinModule('node:tls') as { createSecureContext: typeof createSecureContext; readonly rootCertificates: readonly string[] };
  const original = tls.createSecureContext;
  /** Undefined until the first context; false when the file gave nothing to trust. */
  let ca: string[] | false | undefined;
  let shared: SecureContext | undefined;
  const extraCa = (): string[] | false => {
    if (ca !== undefined) return ca;
    try {
      ca = [...tls.rootCertificates, readFileSync(file, 'utf8')];
      shared = original({ ca });
    } catch (error) {
      ca = false;
      warn(`Warning: Ignoring extra certs from \`${file}\`, load failed: ${(error as Error).message}\n`);
    }
    return ca;
  };
  const withExtraCa = (options?: SecureContextOptions): SecureContext => {
    if (options?.ca) return original(options);
    const roots = extraCa();
    if (roots === false) return original(options);
    const shapes = options !== undefined && CONTEXT_OPTIONS.some((name) => options[name as keyof SecureContextOptions] != null);
    return shapes ? original({ ...options, ca: roots }) : (shared as SecureContext);
  };
  tls.createSecureContext = withExtraCa;
  return () => {
    if (tls.createSecureContext === withExtraCa) tls.createSecureContext = original;
  };
};
