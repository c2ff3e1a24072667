// Issue 33: the CDK app `flowmend init` writes, synthesized with `flowmend/cdk` from the installed npm package
// (test/package/package.test.ts, which runs before the emulator's scenarios and leaves its cloud assembly in
// node_modules/.cache/flowmend-package/), deployed beside the emulator's own stack: the Lambdas run the bundles
// the package ships, and a run is started and followed through `flowmend/client`, SigV4-signed.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FlowmendClient } from '../../functions/hosts/client/flowmend-client.ts';
import { deployStack, emulatorApiUrl } from '../../scripts/emulator/deploy.ts';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from '../../scripts/emulator/emulator.ts';
import { PACKAGE_APP_ASSEMBLY, PACKAGE_APP_STACK } from '../package/support/packed-install.ts';
import { deployedStack } from './support/emulator-state.ts';

const work = mkdtempSync(join(tmpdir(), 'flowmend-package-app-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the app flowmend init wrote, from the installed package, on the AWS emulator', () => {
  it('deploys with the Lambda bundles the package ships, and runs its workflow through flowmend/client', async () => {
    const { endpoint } = await deployedStack();
    if (!existsSync(join(PACKAGE_APP_ASSEMBLY, `${PACKAGE_APP_STACK}.template.json`))) {
      throw new Error(
        `no cloud assembly in ${PACKAGE_APP_ASSEMBLY}: run test/package/package.test.ts first (npm test runs it before the emulator's scenarios)`,
      );
    }
    const outputs = await deployStack({ endpoint, assembly: PACKAGE_APP_ASSEMBLY, stack: PACKAGE_APP_STACK, outputsFile: join(work, 'outputs.json') });
    // The engine's outputs in a stack of the user's are named after the construct's path (FlowmendRestApiId...).
    const restApiId = Object.entries(outputs).find(([key]) => /RestApiId/.test(key))?.[1];
    expect(restApiId, JSON.stringify(outputs)).toBeDefined();

    const client = new FlowmendClient({
      url: emulatorApiUrl(endpoint, restApiId ?? ''),
      sigv4: { region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS },
    });
    const workflow = JSON.parse(readFileSync(join(PACKAGE_APP_ASSEMBLY, '..', 'hello.json'), 'utf8')) as Record<string, unknown>;
    const started = await client.start({ workflow, params: { name: 'Ada' } });
    const report = await client.wait(started.run_id);
    expect(report, JSON.stringify(report.errors)).toMatchObject({ status: 'succeeded', result: { greeting: 'HELLO, ADA' } });
    expect((await client.list({ limit: 5 })).runs.map((r) => r.run_id)).toContain(started.run_id);

    // Unsigned, the deployed API refuses (IAM auth): the signing above is what let the client in.
    const unsigned = new FlowmendClient({ url: emulatorApiUrl(endpoint, restApiId ?? ''), sigv4: false });
    await expect(unsigned.get(started.run_id)).rejects.toMatchObject({ name: 'ApiCallError', status: 403 });
  }, 600_000);
});
