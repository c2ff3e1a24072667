import { AssetHashType, DockerImage, type Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledgeNag, XRAY_REASON } from '../nag.ts';
import { prebuiltLambdaDir, prebuiltPythonCode } from '../prebuilt-code.ts';
import { PYTHON_RUNNER_SOURCE, writePythonRunner } from '../python-runner.ts';

/**
 * The code node's runtime on AWS: 3.12, the Lambda runtime nearest to the Python 3.11 the local host and
 * the emulator run the same wrapper with (the tests' Python), so user code meets one language on both hosts.
 */
export const PYTHON_RUNTIME = lambda.Runtime.PYTHON_3_12;
const RUNTIME_REASON =
  'python3.12 on purpose: the nearest Lambda runtime to the Python 3.11 the local host and the tests run the code node with (one language for user code on both hosts); supported by Lambda until 2028';

export interface PythonRunnerFunctionProps {
  description: string;
  timeout: Duration;
  memoryMb: number;
  logRetentionDays: number;
  reservedConcurrency?: number;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

/** The runner's files: written at synth from the sources, or, installed from npm, those the package was built with. */
const pythonRunnerCode = (): lambda.Code => {
  const prebuilt = prebuiltLambdaDir();
  if (prebuilt !== undefined) return prebuiltPythonCode(prebuilt);
  return lambda.Code.fromAsset(PYTHON_RUNNER_SOURCE, {
    // The wrapper comes from TypeScript (code-python.ts): the hash is the output's, so a change there redeploys.
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: local bundling always succeeds (it only writes two files).
      image: DockerImage.fromRegistry('scratch'),
      local: {
        tryBundle: (outputDir) => {
          writePythonRunner(outputDir);
          return true;
        },
      },
    },
  });
};

/**
 * pflow's `code` node on AWS: a Python Lambda (run_code.handler) with a role that may write its own log
 * group and nothing else: no table, no bucket, no secret, as the shell runner. Its asset is written at synth
 * (infra/python-runner.ts), never in Docker: the handler and the local host's wrapper, copied as they are.
 */
export class PythonRunnerFunction extends Construct {
  readonly fn: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: PythonRunnerFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetentionDays as logs.RetentionDays, removalPolicy: RemovalPolicy.DESTROY });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description}: writes its own log group only`,
    });
    this.logGroup.grantWrite(this.role);
    this.fn = new lambda.Function(this, 'Function', {
      runtime: PYTHON_RUNTIME,
      handler: 'run_code.handler',
      code: pythonRunnerCode(),
      description: props.description,
      role: this.role,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: props.timeout,
      tracing: lambda.Tracing.ACTIVE,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel[props.logLevel ?? 'INFO'],
      systemLogLevelV2:
        lambda.SystemLogLevel[props.logLevel === 'DEBUG' ? 'DEBUG' : props.logLevel === 'INFO' || props.logLevel === undefined ? 'INFO' : 'WARN'],
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
    });
    acknowledgeNag(this.role, 'AwsSolutions', 'AwsSolutions-IAM5[Resource::*]', XRAY_REASON);
    acknowledgeNag(this.fn, 'AwsSolutions', 'AwsSolutions-L1', RUNTIME_REASON);
    acknowledgeNag(this.fn, 'Serverless', 'Serverless-LambdaLatestVersion', RUNTIME_REASON);
    acknowledgeNag(
      this.fn,
      'Serverless',
      'Serverless-LambdaDLQ',
      'invoked synchronously only (by Step Functions): failures go back to the execution, a DLQ applies to asynchronous invocations',
    );
  }
}
