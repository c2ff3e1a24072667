import { MemoryRegistryStore } from '../../functions/core/memory-registry-store.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { makeApiApp } from '../../functions/hosts/api/app.ts';
import { LocalHost, type LocalHostOptions } from '../../functions/hosts/local/local-host.ts';
import { LocalRunLauncher } from '../../functions/hosts/local/local-launcher.ts';
import { localCatalog } from '../../functions/nodes/catalog.ts';

type Answer = { status: number; body: Record<string, unknown> & { error?: { code: string; message: string } } };

/**
 * The API app (the same one `serve` and the API Lambda run) over a real local host on an in-memory store, called
 * in-process: `call` answers with the status and the JSON body; `launcher` waits for the runs it started.
 */
export const inProcessApi = (hostOptions: Partial<LocalHostOptions> = {}) => {
  const host = new LocalHost({ store: new MemoryRunStore(), ...hostOptions });
  const launcher = new LocalRunLauncher(host);
  const app = makeApiApp({ store: host.store, registry: new MemoryRegistryStore(), launcher, catalog: localCatalog, now: Date.now });
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await app.request(path, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };
  return { call, launcher };
};
