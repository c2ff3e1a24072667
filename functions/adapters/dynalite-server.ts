import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DynamoJsonClient, type DynamoJsonClientOptions } from './dynamo-json-client.ts';

const require = createRequire(import.meta.url);
// dynalite is CommonJS with no types usable from ESM TypeScript.
const dynalite = require('dynalite') as (options: Record<string, unknown>) => Server;

/** dynalite keeps new tables CREATING for 500 ms by default, and a write right after CreateTable then fails. */
export const DYNALITE_OPTIONS = { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 } as const;

export interface DynaliteServer {
  endpoint: string;
  close(): Promise<void>;
}

/** dynalite in this process on 127.0.0.1:<ephemeral port>; in memory unless `path` names a LevelDB directory. */
export async function startDynalite(options: { path?: string } = {}): Promise<DynaliteServer> {
  const server = dynalite({ ...DYNALITE_OPTIONS, ...(options.path !== undefined && { path: options.path }) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error?: Error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A client for a local DynamoDB peer: fixed region, dummy credentials. */
export function createLocalDynamoClient(endpoint: string, options: Partial<DynamoJsonClientOptions> = {}): DynamoJsonClient {
  return new DynamoJsonClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    ...options,
  });
}
