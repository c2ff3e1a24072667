// The OpenTelemetry SDK of the Lambdas lives in a file of its own beside the bundle (functions/hosts/lambda/
// bundled-otel.ts), built as the construct builds it: the handler's bundle holds Powertools but not the SDK,
// and with OTEL_EXPORTER_OTLP_ENDPOINT set the bundled code loads the side file and exports before it returns.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleLambda } from '../../bench/lambda-bundle.ts';
import { OTEL_FILE } from '../../functions/hosts/lambda/bundled-otel.ts';
import { OTEL_ENTRY } from '../../infra/bundle-options.ts';
import { buildSideBundle } from '../../infra/side-bundle.ts';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'flowmend-otel-side-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the OpenTelemetry side file of the Lambdas', () => {
  it("keeps the SDK out of the bundle, and exports a run's span from the bundled code when an endpoint is set", async () => {
    const receiver = await startOtlpReceiver();
    try {
      await bundleLambda(join(ROOT, 'test/support/lambda-telemetry-probe.ts'), join(dir, 'index.mjs'), { minify: true });
      await buildSideBundle(join(ROOT, OTEL_ENTRY), join(dir, OTEL_FILE));
      const bundle = readFileSync(join(dir, 'index.mjs'), 'utf8');
      // Markers: the OTLP exporter's class, the SDK's span class; Powertools Logger's level variable.
      for (const absent of ['OTLPTraceExporter', 'BatchSpanProcessor']) expect(bundle.includes(absent), absent).toBe(false);
      expect(bundle.includes('POWERTOOLS_LOG_LEVEL')).toBe(true);
      expect(readFileSync(join(dir, OTEL_FILE), 'utf8').includes('OTLPTraceExporter')).toBe(true);

      const script = `await (await import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)})).handler();`;
      const env = { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'flowmend-lambda-test' };
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env });
      expect(receiver.spans.map((s) => [s.name, s.traceId, s.spanId, s.resource['service.name']])).toEqual([
        ['run on-lambda', '5b8efff798038103d269b633813fc60c', 'eee19b7ec3c1b174', 'flowmend-lambda-test'],
      ]);
      // The same run's log line and EMF metric went to stdout, as the function's log.
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.message === 'run succeeded')).toMatchObject({ run_id: 'run-lambda-otel', trace_id: '5b8efff798038103d269b633813fc60c' });
      expect(lines.find((l) => l._aws !== undefined)).toMatchObject({ 'flowmend.runs.ended': 1, run_id: 'run-lambda-otel' });
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
