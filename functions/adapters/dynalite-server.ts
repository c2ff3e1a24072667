import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

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

/** A client for a local DynamoDB peer: fixed region, dummy credentials, no Node-version warning. */
export function createLocalDynamoClient(endpoint: NonNullable<DynamoDBClientConfig['endpoint']>, config: DynamoDBClientConfig = {}): DynamoDBClient {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    ...config,
  });
}
