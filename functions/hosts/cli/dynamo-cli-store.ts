import { DynamoFlowStore } from '../../adapters/dynamo-flow-store.ts';
import { type AwsCredentialSource, DynamoJsonClient, dynamoEndpointFromEnv } from '../../adapters/dynamo-json-client.ts';
import { DynamoMemoStore } from '../../adapters/dynamo-memo-store.ts';
import { createDocumentClient, DynamoRunStore } from '../../adapters/dynamo-run-store.ts';
import { ensureTable } from '../../adapters/table-schema.ts';
import { ConfigurationError, FlowmendError, StoreUnavailableError } from '../../core/index.ts';

/**
 * `--store dynamodb`: the CLI on a DynamoDB table, on AWS or on a local peer (`AWS_ENDPOINT_URL` or
 * `AWS_ENDPOINT_URL_DYNAMODB`, as the SDK reads them). A local peer gets the table created and
 * placeholder credentials when none are set; on AWS the stack owns the table and the SDK's default
 * credential chain applies (profiles, SSO, ...), loaded only on this path.
 */
export const openDynamoCliStore = async (
  tableName: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ store: DynamoRunStore; memo: DynamoMemoStore; flow: DynamoFlowStore; where: string; close: () => void }> => {
  const endpoint = dynamoEndpointFromEnv(env);
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? (endpoint ? 'us-east-1' : undefined);
  if (region === undefined) {
    throw new ConfigurationError('--store dynamodb needs a region: set AWS_REGION (or AWS_ENDPOINT_URL for a local DynamoDB)');
  }
  const hasCredentials = env.AWS_ACCESS_KEY_ID !== undefined || env.AWS_PROFILE !== undefined;
  let credentials: AwsCredentialSource = { accessKeyId: 'local', secretAccessKey: 'local' };
  if (!endpoint || hasCredentials) {
    // The chain may build STS or SSO clients, which warn about Node 20 on construction.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    credentials = (await import('@aws-sdk/credential-providers')).fromNodeProviderChain();
  }
  const client = new DynamoJsonClient({ region, endpoint, credentials, maxAttempts: 3 });
  if (endpoint) {
    try {
      await ensureTable(client, tableName);
    } catch (error) {
      client.destroy();
      if (error instanceof FlowmendError) throw error;
      throw new StoreUnavailableError(`the DynamoDB at ${endpoint} (AWS_ENDPOINT_URL) did not answer: ${(error as Error).message}`, { cause: error });
    }
  }
  const document = createDocumentClient(client);
  return {
    store: new DynamoRunStore({ client: document, tableName }),
    memo: new DynamoMemoStore({ client: document, tableName }),
    flow: new DynamoFlowStore({ client: document, tableName }),
    where: `DynamoDB table ${tableName}${endpoint ? ` at ${endpoint}` : ` in ${region}`}`,
    close: () => client.destroy(),
  };
};
