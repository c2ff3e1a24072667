import { App } from 'aws-cdk-lib';
import { addEmulatorStack } from '../infra/emulator-stack.ts';
import { FlowmendStack } from '../infra/flowmend-stack.ts';

const app = new App();
// No env: the template is environment-agnostic, so synth needs no credentials and no lookups.
new FlowmendStack(app, app.node.tryGetContext('flowmend:stackName') ?? 'Flowmend', {
  description: 'flowmend: durable, self-healing JSON workflows on Step Functions, Lambda and DynamoDB',
});
// `-c flowmend:emulator=true` (npm test, npm run deploy:emulator): the stack the AWS emulator runs, in the
// same synth, so its Lambdas are the very bundles of the default stack (bundled once for both).
if (['true', true].includes(app.node.tryGetContext('flowmend:emulator'))) addEmulatorStack(app);
app.synth();
