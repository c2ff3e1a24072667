import { Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { acknowledgeNag } from './nag.ts';

/**
 * Lets a runner read secret inputs (`from`) named under the prefix: Secrets Manager's GetSecretValue on
 * `secret:<prefix>*` and SSM's GetParameter on `parameter/<prefix>*` (`ssm:/flowmend/inputs/x` and
 * `ssm:flowmend/inputs/x` both have that ARN). No KMS grant: values encrypted with the AWS managed keys
 * are decrypted by the services for any principal allowed to read them.
 */
export function grantSecretInputs(fn: lambda.Function, prefix: string): void {
  const stack = Stack.of(fn);
  const secrets = Arn.format({ service: 'secretsmanager', resource: 'secret', resourceName: `${prefix}*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }, stack);
  const parameters = Arn.format({ service: 'ssm', resource: 'parameter', resourceName: `${prefix}*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }, stack);
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secrets] }));
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: [parameters] }));
  if (fn.role) {
    for (const resource of [
      `arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${prefix}*`,
      `arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/${prefix}*`,
    ]) {
      acknowledgeNag(
        fn.role,
        'AwsSolutions',
        `AwsSolutions-IAM5[Resource::${resource}]`,
        'secret inputs are named by workflows written after deploy: the grant is the secret input prefix (secretInputPrefix), read only',
      );
    }
  }
}
