import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DescribeStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { GetFunctionConfigurationCommand, type LambdaClient, UpdateFunctionCodeCommand, UpdateFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import { OTEL_FILE } from '../../../functions/hosts/lambda/bundled-otel.ts';
import { OTEL_ENTRY } from '../../../infra/bundle-options.ts';
import { EMULATOR_STACK_NAME } from '../../../infra/emulator-stack.ts';
import { buildSideBundle } from '../../../infra/side-bundle.ts';
import { cloudFormation } from '../../../scripts/emulator/deploy.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown>; Metadata?: Record<string, unknown> }> };

/** A zip of the files of `dir` at its root (Python's zipfile: on every machine the emulator runs on). */
const zipOf = async (dir: string): Promise<Uint8Array> => {
  const out = `${dir}.zip`;
  await run('python3', [
    '-c',
    'import os,sys,zipfile\nwith zipfile.ZipFile(sys.argv[2],"w",zipfile.ZIP_DEFLATED) as z:\n  for n in sorted(os.listdir(sys.argv[1])): z.write(os.path.join(sys.argv[1],n),n)',
    dir,
    out,
  ]);
  return readFileSync(out);
};

/**
 * The deployed functions named by `logicalPrefixes` as a deploy with the `otlpEndpoint` prop makes them:
 * the OpenTelemetry side file (`otel.mjs`, built as the construct's afterBundling hook builds it) beside
 * their bundle from the cloud assembly, and OTEL_EXPORTER_OTLP_ENDPOINT set. Returns what puts them back.
 */
export async function withOtlpEndpoint(options: {
  endpoint: string;
  assembly: string;
  lambda: LambdaClient;
  logicalPrefixes: readonly string[];
  otlpEndpoint: string;
}): Promise<() => Promise<void>> {
  const { endpoint, assembly, lambda, logicalPrefixes, otlpEndpoint } = options;
  const template = JSON.parse(readFileSync(join(assembly, `${EMULATOR_STACK_NAME}.template.json`), 'utf8')) as Template;
  const resources = (await cloudFormation(endpoint).send(new DescribeStackResourcesCommand({ StackName: EMULATOR_STACK_NAME }))).StackResources ?? [];
  const work = mkdtempSync(join(tmpdir(), 'flowmend-otlp-'));
  const otel = join(work, OTEL_FILE);
  await buildSideBundle(join(ROOT, OTEL_ENTRY), otel);
  const restores: (() => Promise<void>)[] = [];
  try {
    for (const prefix of logicalPrefixes) {
      const entry = Object.entries(template.Resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(prefix));
      const asset = entry?.[1].Metadata?.['aws:asset:path'];
      const name = resources.find((r) => r.LogicalResourceId === entry?.[0])?.PhysicalResourceId;
      if (entry === undefined || typeof asset !== 'string' || name === undefined)
        throw new Error(`no deployed function ${prefix} with a bundle in ${assembly}`);
      const bundle = join(work, prefix);
      cpSync(join(assembly, asset), bundle, { recursive: true });
      const original = await zipOf(bundle);
      cpSync(otel, join(bundle, OTEL_FILE));
      const withOtel = await zipOf(bundle);
      const variables = (await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }))).Environment?.Variables ?? {};
      await lambda.send(new UpdateFunctionCodeCommand({ FunctionName: name, ZipFile: withOtel }));
      await lambda.send(
        new UpdateFunctionConfigurationCommand({ FunctionName: name, Environment: { Variables: { ...variables, OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint } } }),
      );
      restores.push(async () => {
        await lambda.send(new UpdateFunctionCodeCommand({ FunctionName: name, ZipFile: original }));
        await lambda.send(new UpdateFunctionConfigurationCommand({ FunctionName: name, Environment: { Variables: variables } }));
      });
    }
  } catch (error) {
    for (const restore of restores) await restore();
    throw error;
  }
  return async () => {
    for (const restore of restores) await restore();
    rmSync(work, { recursive: true, force: true });
  };
}
