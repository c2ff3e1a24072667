import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStackResourcesCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { cdk, EMULATOR_ACCOUNT, EMULATOR_CREDENTIALS, EMULATOR_REGION } from './emulator.ts';

/**
 * Resource types moto's CloudFormation does not create, and why that changes nothing the tests check:
 * the bucket's SSL-only policy would refuse the emulator's plain-HTTP endpoint (AWS is HTTPS only); the
 * queue policy lets EventBridge send to the dead-letter queue, which moto does not check; CDK metadata
 * is CDK's own.
 */
export const SKIPPED_TYPES: Readonly<Record<string, string>> = {
  'AWS::CDK::Metadata': "CDK's version report, no behaviour",
  'AWS::S3::BucketPolicy': "SSL-only: the emulator's endpoint is plain HTTP",
  'AWS::SQS::QueuePolicy': 'moto does not check who may send to a queue',
};

export type StackOutputs = Record<string, string>;

export const cloudFormation = (endpoint: string) => new CloudFormationClient({ endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS });

/**
 * `cdk bootstrap` and `cdk deploy` of one stack of a synthesized assembly, as a user runs them, then a
 * check that every resource of the template exists (moto's CloudFormation reports success even when it
 * skipped a resource or failed on one). Returns the stack's outputs (also written to `outputsFile`, in
 * the shape of `cdk deploy --outputs-file`).
 */
export async function deployStack(options: { endpoint: string; assembly: string; stack: string; outputsFile: string }): Promise<StackOutputs> {
  const { endpoint, assembly, stack, outputsFile } = options;
  await cdk(['bootstrap', `aws://${EMULATOR_ACCOUNT}/${EMULATOR_REGION}`, '--app', assembly], endpoint);
  await cdk(['deploy', stack, '--app', assembly, '--require-approval', 'never', '--outputs-file', outputsFile], endpoint);

  const template = JSON.parse(readFileSync(join(assembly, `${stack}.template.json`), 'utf8')) as { Resources: Record<string, { Type: string }> };
  const client = cloudFormation(endpoint);
  const described = await client.send(new DescribeStacksCommand({ StackName: stack }));
  const status = described.Stacks?.[0]?.StackStatus;
  if (status !== 'CREATE_COMPLETE' && status !== 'UPDATE_COMPLETE') throw new Error(`stack ${stack} is ${status} after cdk deploy`);
  const resources = (await client.send(new DescribeStackResourcesCommand({ StackName: stack }))).StackResources ?? [];
  const created = new Set(resources.map((r) => r.LogicalResourceId));
  const missing = Object.entries(template.Resources)
    .filter(([id, resource]) => !created.has(id) && !(resource.Type in SKIPPED_TYPES))
    .map(([id, resource]) => `${id} (${resource.Type})`);
  if (missing.length > 0) throw new Error(`cdk deploy to the emulator left out ${missing.length} resources: ${missing.join(', ')}`);

  const outputs = Object.fromEntries((described.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
  writeFileSync(outputsFile, `${JSON.stringify({ [stack]: outputs }, null, 2)}\n`);
  return outputs;
}

/** The REST API's stage URL on the emulator (LocalStack's path form: moto has no API hosts). */
export const emulatorApiUrl = (endpoint: string, restApiId: string, stage = 'v1'): string => `${endpoint}/restapis/${restApiId}/${stage}/_user_request_`;
