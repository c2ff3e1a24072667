import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { RunStateMachine } from './constructs/run-state-machine.ts';

/**
 * Item reads and conditional writes on runs, workflows, schedules and idempotency keys, and queries of
 * the run indexes: no Scan, no table administration, no stream or export.
 */
export const RUN_CONTROL_TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/**
 * What a Lambda that starts runs may do (the API and scheduled-start): the table items above, start executions of either machine; the API also describes
 * and stops executions, to tell whether a run is alive and to cancel it.
 */
export function grantRunControl(props: { fn: lambda.IFunction; table: dynamodb.Table; machines: readonly RunStateMachine[]; stopAndDescribe: boolean }): void {
  props.table.grant(props.fn, ...RUN_CONTROL_TABLE_ACTIONS);
  for (const { stateMachine } of props.machines) {
    stateMachine.grantStartExecution(props.fn);
    if (props.stopAndDescribe) stateMachine.grantExecution(props.fn, 'states:DescribeExecution', 'states:StopExecution');
  }
}
