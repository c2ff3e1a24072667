/**
 * The AWS packages the CLI loads only for some commands (`--store dynamodb`, `--api` on AWS, secret inputs from
 * Secrets Manager or SSM, an Anthropic key in Secrets Manager): the npm package leaves them to the user as optional
 * peers, so that an install for local runs does not fetch the AWS SDK. A command that needs one that is not
 * installed says which and how to get it, instead of a stack trace.
 */
export const missingOptionalDependency = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  const name = /'((?:@aws-sdk|@smithy)\/[a-z0-9-]+)'/.exec(error instanceof Error ? error.message : '')?.[1];
  if (name === undefined) return undefined;
  return `this command needs ${name}, which flowmend leaves optional (the AWS SDK serves --store dynamodb, --api on AWS and secret inputs only): npm install ${name}`;
};
