// The first DynamoDB request of a cold start, SDK against DynamoJsonClient: each bundled as the Lambdas
// are (infra/bundle-options.ts), each in fresh Node processes that import the bundle, then send one
// GetItem and a second one to dynalite on 127.0.0.1 (so the network costs the same for both; on AWS
// add TLS). Prints bytes and ms; no assertions. Run: node --import tsx bench/cold-start-dynamo.ts
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { createLocalDynamoClient, startDynalite } from '../functions/adapters/dynalite-server.ts';
import { ensureTable } from '../functions/adapters/table-schema.ts';
import { lambdaEsbuildOptions } from '../infra/bundle-options.ts';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TABLE = 'bench-first-request';
// The store's marshalling options (RUN_STORE_TRANSLATE_CONFIG), inline so that neither bundle takes core.
const TRANSLATE = `{ marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false, allowImpreciseNumbers: true }, unmarshallOptions: { wrapNumbers: (v) => Number(v) } }`;
const GET = `{ TableName: process.env.TABLE_NAME, Key: { pk: 'RUN#bench', sk: 'RUN' }, ConsistentRead: true }`;

const ENTRIES = {
  'sdk (client-dynamodb + lib-dynamodb)': `
    import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
    import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
    let doc;
    export const handler = async () => {
      doc ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), ${TRANSLATE});
      return doc.send(new GetCommand(${GET}));
    };`,
  'DynamoJsonClient + DynamoDocument': `
    import { DynamoDocument } from './functions/adapters/dynamo-document.ts';
    import { DynamoJsonClient, dynamoEndpointFromEnv } from './functions/adapters/dynamo-json-client.ts';
    import { credentialsFromEnv } from './functions/adapters/env-credentials.ts';
    let doc;
    export const handler = async () => {
      doc ??= new DynamoDocument(new DynamoJsonClient({ region: process.env.AWS_REGION, credentials: credentialsFromEnv(), endpoint: dynamoEndpointFromEnv(process.env) }), ${TRANSLATE});
      return doc.send('GetItem', ${GET});
    };`,
};

const PROBE = `
const t0 = performance.now();
const mod = await import(process.argv[1]);
const t1 = performance.now();
await mod.handler();
const t2 = performance.now();
await mod.handler();
const t3 = performance.now();
console.log(JSON.stringify({ importMs: t1 - t0, firstMs: t2 - t1, secondMs: t3 - t2 }));
process.exit(0);
`;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const root = fileURLToPath(new URL('..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'flowmend-dynamo-cold-'));
const dynalite = await startDynalite();
try {
  await ensureTable(createLocalDynamoClient(dynalite.endpoint), TABLE);
  const env = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
    TABLE_NAME: TABLE,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const files = await Promise.all(
    Object.entries(ENTRIES).map(async ([name, contents], i) => {
      const outfile = join(out, `entry-${i}.mjs`);
      await build({ ...lambdaEsbuildOptions(), stdin: { contents, resolveDir: root, loader: 'ts' }, absWorkingDir: root, outfile });
      return { name, outfile };
    }),
  );
  const timings = new Map(files.map((f) => [f.name, [] as Array<{ importMs: number; firstMs: number; secondMs: number }>]));
  // Alternating rounds, so that a change in the machine's load hits both alike.
  for (let r = 0; r < ROUNDS; r++) {
    for (const { name, outfile } of files) {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', PROBE, pathToFileURL(outfile).href], { env });
      timings.get(name)?.push(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}'));
    }
  }
  console.log(
    `first DynamoDB request of a cold start: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, median of ${ROUNDS} fresh processes, dynalite on 127.0.0.1, load average ${loadavg()[0]?.toFixed(1)}`,
  );
  console.log(`${'client'.padEnd(38)} ${'bundle KB'.padStart(10)} ${'import ms'.padStart(10)} ${'1st GetItem'.padStart(12)} ${'2nd GetItem'.padStart(12)}`);
  for (const { name, outfile } of files) {
    const rows = timings.get(name) ?? [];
    const cell = (pick: (t: { importMs: number; firstMs: number; secondMs: number }) => number, width: number) =>
      median(rows.map(pick)).toFixed(1).padStart(width);
    console.log(
      `${name.padEnd(38)} ${(statSync(outfile).size / 1024).toFixed(0).padStart(10)} ${cell((t) => t.importMs, 10)} ${cell((t) => t.firstMs, 12)} ${cell((t) => t.secondMs, 12)}`,
    );
  }
} finally {
  await dynalite.close();
  rmSync(out, { recursive: true, force: true });
}
