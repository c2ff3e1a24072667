import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges one cdk-nag finding on a construct and its children, with the reason it is right here.
 * `pack` and `rule` as cdk-nag prints them ("Acknowledge with 'AwsSolutions::AwsSolutions-IAM5[...]'").
 * Every call site says why; test/infra/nag.test.ts runs the AwsSolutions and Serverless packs and
 * fails on any finding that is not acknowledged.
 */
export const acknowledgeNag = (scope: IConstruct, pack: 'AwsSolutions' | 'Serverless', rule: string, reason: string): void => {
  Validations.of(scope).acknowledge({ id: `${pack}::${rule}`, reason });
};

export const XRAY_REASON = 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions (Resource "*" is the only form AWS accepts)';
