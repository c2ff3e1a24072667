import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { FlowmendStack } from '../../infra/flowmend-stack.ts';
import type { FlowmendStackProps } from '../../infra/props.ts';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

type Report = { pluginReports: { pluginName: string; violations: { ruleName: string; violatingConstructs: { constructPath: string }[] }[] }[] };

/** Synthesizes the stack with cdk-nag's packs as validation plugins; returns every unacknowledged finding. */
async function nagFindings(props: FlowmendStackProps = {}, change?: (stack: FlowmendStack) => void): Promise<string[]> {
  const outdir = await mkdtemp(join(tmpdir(), 'flowmend-nag-'));
  dirs.push(outdir);
  const cdkJson = JSON.parse(await readFile(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
  const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new FlowmendStack(app, 'Flowmend', props);
  change?.(stack);
  // toolchain.md section 8: cdk-nag 3 is a validation plugin (Aspects crash synth).
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  try {
    app.synth();
    return [];
  } catch (error) {
    if (!existsSync(join(outdir, 'validation-report.json'))) throw error;
    const report = JSON.parse(await readFile(join(outdir, 'validation-report.json'), 'utf8')) as Report;
    return report.pluginReports.flatMap((plugin) =>
      plugin.violations.flatMap((v) => v.violatingConstructs.map((c) => `${plugin.pluginName} ${v.ruleName} at ${c.constructPath}`)),
    );
  }
}

describe('cdk-nag (AwsSolutions and Serverless packs)', () => {
  it('finds nothing unacknowledged in the stack as deployed by default', async () => {
    expect(await nagFindings()).toEqual([]);
  }, 120_000);

  it('still finds nothing with an alarm topic, verbose logs and no reserved runner concurrency', async () => {
    expect(await nagFindings({ alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:oncall', logLevel: 'ALL', runnerConcurrency: 0 })).toEqual([]);
  }, 120_000);

  it('can fail: a wildcard action granted to a runner is reported', async () => {
    const findings = await nagFindings({}, (stack) => {
      const shell = stack.engine.node.findChild('RunShell').node.findChild('Function') as NodejsFunction;
      shell.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:*'], resources: ['arn:aws:dynamodb:us-east-1:123456789012:table/other'] }));
    });
    expect(findings).toEqual(['AwsSolutions AwsSolutions-IAM5[Action::dynamodb:*] at Flowmend/Default/RunShell/Role/DefaultPolicy/Resource']);
  }, 120_000);
});
