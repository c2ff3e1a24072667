import { fileCallbackKey } from '../../adapters/callback-key-file.ts';
import { type CallbackSource, ConfigurationError } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { DEFAULT_SERVE_PORT } from './cli-args.ts';

const CallbackUrlSchema = z.url({ protocol: /^https?$/, error: 'FLOWMEND_CALLBACK_URL is the http(s) URL callbacks reach, e.g. https://hooks.example.com' });

/**
 * Callbacks on the local host: the key in the state dir, and the URL they reach: FLOWMEND_CALLBACK_URL
 * when set (serve behind a tunnel or a proxy), else the listening serve's own origin, else serve's
 * default address on this machine (a CLI run whose events `flowmend serve` will take).
 */
export const localCallbacks = (stateDir: string, env: Readonly<Record<string, string | undefined>>, origin?: () => string | undefined): CallbackSource => {
  const configured = env.FLOWMEND_CALLBACK_URL;
  if (configured !== undefined) {
    const parsed = CallbackUrlSchema.safeParse(configured);
    if (!parsed.success) throw new ConfigurationError(parsed.error.issues[0]?.message ?? 'FLOWMEND_CALLBACK_URL is not a URL');
  }
  const key = fileCallbackKey(stateDir);
  return {
    // The origin is read at each load: serve knows it once it listens.
    load: async () => ({ key: await key(), baseUrl: configured ?? origin?.() ?? `http://127.0.0.1:${DEFAULT_SERVE_PORT}` }),
  };
};
