import { App } from 'aws-cdk-lib';
import { FlowmendStack } from '../infra/flowmend-stack.ts';

const app = new App();
// No env: the template is environment-agnostic, so synth needs no credentials and no lookups.
new FlowmendStack(app, app.node.tryGetContext('flowmend:stackName') ?? 'Flowmend', {
  description: 'flowmend: durable, self-healing JSON workflows on Step Functions, Lambda and DynamoDB',
});
app.synth();
