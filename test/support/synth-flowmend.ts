import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { FlowmendStack } from '../../infra/flowmend-stack.ts';
import type { FlowmendStackProps } from '../../infra/props.ts';

const cdkContext = (): Record<string, unknown> => {
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
};

/** The stack as `cdk synth` builds it (cdk.json context and feature flags), with esbuild bundling skipped unless asked. */
export function synthFlowmend(props: FlowmendStackProps = {}, options: { bundle?: boolean; context?: Record<string, unknown>; outdir?: string } = {}) {
  const app = new App({
    ...(options.outdir === undefined ? {} : { outdir: options.outdir }),
    context: { ...cdkContext(), ...(options.bundle === true ? {} : { 'aws:cdk:bundling-stacks': [] }), ...options.context },
  });
  const stack = new FlowmendStack(app, 'Flowmend', props);
  return { app, stack, template: Template.fromStack(stack) };
}
