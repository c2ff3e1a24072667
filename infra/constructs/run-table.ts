import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { GSI, TABLE_KEYS } from '../../functions/adapters/table-schema.ts';

/** The single run table, with the key, index and TTL names the DynamoDB adapter uses. */
export class RunTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: { removalPolicy: RemovalPolicy }) {
    super(scope, id);
    const string = dynamodb.AttributeType.STRING;
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.pk, type: string },
      sortKey: { name: TABLE_KEYS.sk, type: string },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_KEYS.ttl,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: props.removalPolicy,
    });
    for (const index of [GSI.byWorkflow, GSI.byDay]) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.pk, type: string },
        sortKey: { name: index.sk, type: string },
        projectionType: dynamodb.ProjectionType.KEYS_ONLY,
      });
    }
  }
}
