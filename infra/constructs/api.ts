import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

/** IAM: callers sign with SigV4 and need `execute-api:Invoke` (the default). apiKey: an `x-api-key` header and a usage plan. */
export type ApiAuth = 'iam' | 'apiKey';

export interface FlowmendApiProps {
  handler: lambda.IFunction;
  auth: ApiAuth;
  /** Steady requests per second and burst, per stage (and per key with `apiKey`). */
  throttle: { rateLimit: number; burstLimit: number };
}

export const API_STAGE = 'v1';

/**
 * The REST API (API Gateway v1, which LocalStack also serves): every path and method goes to the one
 * API Lambda (a proxy integration; the app routes and validates), behind IAM or an API key.
 */
export class FlowmendApi extends Construct {
  readonly api: apigateway.LambdaRestApi;
  /** Set with `apiKey`: read its value with `aws apigateway get-api-key --api-key <id> --include-value`. */
  readonly apiKey: apigateway.IApiKey | undefined;

  constructor(scope: Construct, id: string, props: FlowmendApiProps) {
    super(scope, id);
    this.api = new apigateway.LambdaRestApi(this, 'Api', {
      handler: props.handler,
      proxy: true,
      description: 'flowmend: start, inspect, resume and cancel runs; register workflows and schedules',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      defaultMethodOptions:
        props.auth === 'iam' ? { authorizationType: apigateway.AuthorizationType.IAM } : { apiKeyRequired: true, authorizationType: apigateway.AuthorizationType.NONE },
      deployOptions: {
        stageName: API_STAGE,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        tracingEnabled: true,
      },
      cloudWatchRole: false,
    });
    if (props.auth === 'iam') {
      this.apiKey = undefined;
      return;
    }
    const plan = this.api.addUsagePlan('UsagePlan', {
      description: 'flowmend API callers holding the stack key',
      throttle: props.throttle,
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
    this.apiKey = this.api.addApiKey('ApiKey', { description: 'flowmend API key (x-api-key header)' });
    plan.addApiKey(this.apiKey);
  }

  /** `https://{id}.execute-api.{region}.amazonaws.com/v1/` */
  get url(): string {
    return this.api.url;
  }
}
