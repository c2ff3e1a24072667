import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { acknowledgeNag } from '../nag.ts';

/** Node outputs too large for a table item or a state payload; private, encrypted, expiring. */
export class BlobBucket extends Construct {
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: { removalPolicy: RemovalPolicy; expiryDays: number }) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(props.expiryDays), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: props.removalPolicy,
      autoDeleteObjects: props.removalPolicy === RemovalPolicy.DESTROY,
    });
    acknowledgeNag(
      this.bucket,
      'AwsSolutions',
      'AwsSolutions-S1',
      'engine-internal scratch space reached only by the engine roles and one-object presigned URLs, expiring with the runs; access logs would need a second bucket per stack (CloudTrail S3 data events can be enabled account-wide instead)',
    );
  }
}
