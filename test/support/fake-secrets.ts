import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { readBody } from './read-body.ts';

export interface FakeSecrets {
  endpoint: string;
  secretsManager: SecretsManagerClient;
  ssm: SSMClient;
  /** Secrets Manager secrets by name. */
  secrets: Map<string, string>;
  /** SSM parameters by name (served decrypted when asked WithDecryption). */
  parameters: Map<string, string>;
  /** `Target Name`, in order. */
  calls: string[];
  close(): Promise<void>;
}

/**
 * Secrets Manager's and SSM's JSON 1.1 APIs on one 127.0.0.1 port, told apart by `X-Amz-Target`:
 * GetSecretValue and GetParameter, with each service's own not-found error.
 */
export async function startFakeSecrets(): Promise<FakeSecrets> {
  const secrets = new Map<string, string>();
  const parameters = new Map<string, string>();
  const calls: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const body = JSON.parse((await readBody(req)) || '{}') as { SecretId?: string; Name?: string; WithDecryption?: boolean };
    const answer = (status: number, payload: unknown) => res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(payload));
    if (target === 'secretsmanager.GetSecretValue') {
      const name = body.SecretId ?? '';
      calls.push(`${target} ${name}`);
      const value = secrets.get(name);
      if (value === undefined) return answer(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
      return answer(200, { ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${name}-AbCdEf`, Name: name, SecretString: value, VersionId: 'v1' });
    }
    if (target === 'AmazonSSM.GetParameter') {
      const name = body.Name ?? '';
      calls.push(`${target} ${name}`);
      const value = parameters.get(name);
      if (value === undefined) return answer(400, { __type: 'ParameterNotFound', message: '' });
      return answer(200, { Parameter: { Name: name, Type: 'SecureString', Value: body.WithDecryption ? value : 'AQICAH-encrypted', Version: 1 } });
    }
    calls.push(`${target} ?`);
    return answer(400, { __type: 'UnknownOperationException', message: `the fake does not serve ${target}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const config = { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 };
  const secretsManager = new SecretsManagerClient(config);
  const ssm = new SSMClient(config);
  return {
    endpoint,
    secretsManager,
    ssm,
    secrets,
    parameters,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        secretsManager.destroy();
        ssm.destroy();
        server.close(() => resolve());
      }),
  };
}
