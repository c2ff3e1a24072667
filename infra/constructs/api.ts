import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { acknowledgeNag } from '../nag.ts';

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
        props.auth === 'iam'
          ? { authorizationType: apigateway.AuthorizationType.IAM }
          : { apiKeyRequired: true, authorizationType: apigateway.AuthorizationType.NONE },
      deployOptions: {
        stageName: API_STAGE,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        tracingEnabled: true,
      },
      cloudWatchRole: false,
    });
    acknowledgeNag(
      this.api,
      'AwsSolutions',
      'AwsSolutions-APIG2',
      'the app parses every body, query and path parameter with zod and answers 400 naming the field (413 over the size limit)',
    );
    for (const rule of ['AwsSolutions-APIG1', 'AwsSolutions-APIG6']) {
      acknowledgeNag(
        this.api,
        'AwsSolutions',
        rule,
        'API Gateway logging needs the account-wide CloudWatch role, which this stack does not create (@aws-cdk/aws-apigateway:disableCloudWatchRole); the API Lambda logs every 5xx',
      );
    }
    acknowledgeNag(
      this.api,
      'Serverless',
      'Serverless-APIGWAccessLogging',
      'API Gateway access logs need the account-wide CloudWatch role, which this stack does not create; the API Lambda logs every 5xx',
    );
    acknowledgeNag(
      this.api,
      'AwsSolutions',
      'AwsSolutions-APIG3',
      'callers are IAM principals (or API-key holders under a throttled usage plan); attach a WAF web ACL to the stage where the API key is used from the internet',
    );
    acknowledgeNag(this.api, 'AwsSolutions', 'AwsSolutions-COG4', 'IAM (SigV4) authorization by default, an API key as a prop: flowmend has no user pool');
    // Callbacks of waiting runs (DESIGN 7b): third parties cannot sign SigV4, and the token in the path is the
    // credential, which the app checks against the hash the run holds. A resource of its own, made directly
    // (a proxying LambdaRestApi refuses addResource on its root), so the rest of the API keeps its authorization.
    const callbacks = new apigateway.Resource(this, 'Callbacks', { parent: this.api.root, pathPart: 'callbacks' });
    const callback = callbacks.addResource('{run}').addResource('{token}');
    const method = callback.addMethod('POST', new apigateway.LambdaIntegration(props.handler), {
      authorizationType: apigateway.AuthorizationType.NONE,
      apiKeyRequired: false,
    });
    for (const rule of ['AwsSolutions-APIG4', 'AwsSolutions-COG4']) {
      acknowledgeNag(
        method,
        'AwsSolutions',
        rule,
        'a callback from a third party carries no AWS credentials: its single-use token (checked by the app against a stored hash) is the credential',
      );
    }
    if (props.auth === 'iam') {
      this.apiKey = undefined;
      return;
    }
    const plan = this.api.addUsagePlan('UsagePlan', {
      description: 'flowmend API callers holding the stack key',
      throttle: props.throttle,
      // exactOptionalPropertyTypes: LambdaRestApi declares latestDeployment as possibly undefined, IRestApi not.
      apiStages: [{ api: this.api as apigateway.IRestApi, stage: this.api.deploymentStage }],
    });
    this.apiKey = this.api.addApiKey('ApiKey', { description: 'flowmend API key (x-api-key header)' });
    plan.addApiKey(this.apiKey);
  }

  /** `https://{id}.execute-api.{region}.amazonaws.com/v1/` */
  get url(): string {
    return this.api.url;
  }
}
