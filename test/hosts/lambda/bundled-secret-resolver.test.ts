import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsSecretResolver } from '../../../functions/adapters/aws-secret-resolver.ts';
import { lazySecretResolver, SECRET_RESOLVER_FILE, secretResolverUrl } from '../../../functions/hosts/lambda/bundled-secret-resolver.ts';
import { type FakeSecrets, startFakeSecrets } from '../../support/fake-secrets.ts';

// The bundled layout itself (index.mjs loading its side file) is run in test/infra/bundling.test.ts.
let fake: FakeSecrets;
beforeAll(async () => {
  fake = await startFakeSecrets();
  fake.parameters.set('/p/one', 'v1');
  fake.secrets.set('s/two', 'v2');
});
afterAll(() => fake.close());

describe('lazySecretResolver', () => {
  it('loads the resolver on the first resolve only, once for concurrent and later reads', async () => {
    let loads = 0;
    const lazy = lazySecretResolver(async () => {
      loads += 1;
      return new AwsSecretResolver({ secretsManager: fake.secretsManager, ssm: fake.ssm });
    });
    expect(loads).toBe(0);
    const values = await Promise.all([lazy.resolve({ service: 'ssm', name: '/p/one' }), lazy.resolve({ service: 'secretsmanager', name: 's/two' })]);
    expect(values).toEqual(['v1', 'v2']);
    await lazy.resolve({ service: 'ssm', name: '/p/one' });
    expect(loads).toBe(1);
  });

  it('tries the load again after a failed one', async () => {
    let loads = 0;
    const lazy = lazySecretResolver(async () => {
      loads += 1;
      if (loads === 1) throw new Error('aws-secrets.mjs: cannot find module');
      return new AwsSecretResolver({ ssm: fake.ssm });
    });
    await expect(lazy.resolve({ service: 'ssm', name: '/p/one' })).rejects.toThrow(/cannot find module/);
    await expect(lazy.resolve({ service: 'ssm', name: '/p/one' })).resolves.toBe('v1');
    expect(loads).toBe(2);
  });

  it('finds the side file beside a bundle, and the adapter from source', () => {
    expect(secretResolverUrl('file:///var/task/index.mjs')).toBe(`file:///var/task/${SECRET_RESOLVER_FILE}`);
    const fromSource = secretResolverUrl(new URL('../../../functions/hosts/lambda/bundled-secret-resolver.ts', import.meta.url).href);
    expect(existsSync(fileURLToPath(fromSource))).toBe(true);
    expect(fromSource.endsWith('functions/adapters/aws-secret-resolver.ts')).toBe(true);
  });
});
