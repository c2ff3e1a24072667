import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ESM_REQUIRE_SHIM, LAMBDA_NODE_TARGET, LAMBDA_SOURCE_MAP } from '../bundle-options.ts';

/** Path of a Lambda entry point under functions/hosts/lambda. */
export const handlerEntry = (name: string): string =>
  fileURLToPath(new URL(`../../functions/hosts/lambda/${name}.ts`, import.meta.url));

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));


export interface FlowmendFunctionProps {
  /** File name under functions/hosts/lambda, without `.ts`. */
  handler: string;
  description: string;
  timeout: Duration;
  memoryMb: number;
  logRetentionDays: number;
  environment?: Record<string, string>;
}

/** A Lambda with its own role and log group: Node 22 on arm64, an ESM bundle built by the local esbuild, X-Ray on. */
export class FlowmendFunction extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: FlowmendFunctionProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.fn = new NodejsFunction(this, 'Function', {
      entry: handlerEntry(props.handler),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      description: props.description,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: props.timeout,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      environment: {
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: LAMBDA_NODE_TARGET,
        platform: 'node',
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: LAMBDA_SOURCE_MAP,
        banner: ESM_REQUIRE_SHIM,
        logLevel: LogLevel.ERROR,
        // Bundle our pinned SDK versions instead of whatever the runtime ships.
        externalModules: [],
      },
    });
  }
}
