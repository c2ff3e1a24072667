import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { handle } from 'hono/aws-lambda';
import type { ApiDeps } from '../api/api-deps.ts';
import { makeApiApp } from '../api/app.ts';
import { settleTelemetry } from './telemetry-settle.ts';

type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** The REST API behind API Gateway (v1 proxy events): the same app as `flowmend serve`. */
export const makeApiHandler = (deps: ApiDeps): ApiHandler => handle(makeApiApp(deps)) as ApiHandler;

let awsHandler: ApiHandler | undefined;

/** Lambda entry: clients are built on the first request of a cold start. */
export const handler: ApiHandler = async (event, context) => {
  if (!awsHandler) {
    const { apiDepsFromEnv } = await import('./api-deps.ts');
    awsHandler = makeApiHandler(apiDepsFromEnv());
  }
  try {
    return await awsHandler(event, context);
  } finally {
    await settleTelemetry();
  }
};
