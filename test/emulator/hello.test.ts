import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type DeployedStack, useDeployedStack } from './support/stack.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let stack: DeployedStack;
beforeAll(async () => {
  stack = await useDeployedStack();
});

describe('the stack deployed to the AWS emulator', () => {
  it('runs examples/hello.json started through the REST API to success', async () => {
    const workflow = JSON.parse(readFileSync(join(ROOT, 'examples', 'hello.json'), 'utf8')) as unknown;
    const runId = await stack.start({ workflow });
    const report = await stack.waitFor(runId);
    expect(report).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO WORLD' } });
  });
});
