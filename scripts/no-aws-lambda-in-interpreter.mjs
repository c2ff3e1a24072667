// An esbuild plugin for the CLI bundle. aws-local-stepfunctions imports the AWS SDK's Lambda client to call
// Tasks that have no local handler. The local host binds every Task by state name, so that path never runs:
// a stub keeps the client out of every local run, and throws if ever reached. asl-validator stays: the local
// host validates the definition as Step Functions does before it runs it (issue 12: what AWS refuses, the
// laptop refuses).
export const noAwsLambdaInInterpreter = {
  name: 'no-aws-lambda-in-interpreter',
  setup(build) {
    build.onResolve({ filter: /^(@aws-sdk\/(client-lambda|credential-providers))$/ }, (args) =>
      args.importer.includes('aws-local-stepfunctions') ? { path: args.path, namespace: 'flowmend-stub' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'flowmend-stub' }, () => ({
      contents: `const unbound = () => { throw new Error('flowmend: the local interpreter reached for AWS Lambda, which the local host never uses'); };
        export class LambdaClient { constructor() { unbound(); } }
        export class InvokeCommand { constructor() { unbound(); } }
        export const fromCognitoIdentityPool = unbound;
        export default unbound;`,
      loader: 'js',
    }));
  },
};
