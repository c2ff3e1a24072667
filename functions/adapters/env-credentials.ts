import { ConfigurationError } from '../core/index.ts';
import type { AwsCredentials } from './dynamo-json-client.ts';

/**
 * The credentials Lambda puts in the environment for the function's role, valid for the sandbox's life.
 * @aws-sdk/credential-provider-env reads the same three variables, but its package brings the SDK's
 * endpoint and partition tables (20 KB of every bundle that imports it) along with them.
 */
export const credentialsFromEnv =
  (env: NodeJS.ProcessEnv = process.env) =>
  async (): Promise<AwsCredentials> => {
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) {
      throw new ConfigurationError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (the Lambda runtime sets them for the function role)');
    }
    const sessionToken = env.AWS_SESSION_TOKEN;
    return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  };
