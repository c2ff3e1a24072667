import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/** An API Gateway REST API (v1) proxy event, as the `{proxy+}` resource of stage `v1` delivers it, IAM-signed. */
export function apiGatewayV1Event(
  method: string,
  pathWithQuery: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): APIGatewayProxyEvent {
  const url = new URL(pathWithQuery, 'https://abc123.execute-api.us-east-1.amazonaws.com');
  const query = Object.fromEntries(url.searchParams);
  const headers = {
    Host: 'abc123.execute-api.us-east-1.amazonaws.com',
    ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...options.headers,
  };
  const hasQuery = Object.keys(query).length > 0;
  return {
    httpMethod: method,
    path: url.pathname,
    resource: '/{proxy+}',
    pathParameters: { proxy: url.pathname.slice(1) },
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])) : null,
    stageVariables: null,
    body: options.body === undefined ? null : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      httpMethod: method,
      path: `/v1${url.pathname}`,
      protocol: 'HTTP/1.1',
      requestId: `req-${Math.random().toString(16).slice(2)}`,
      requestTimeEpoch: Date.now(),
      resourceId: 'proxy',
      resourcePath: '/{proxy+}',
      stage: 'v1',
      authorizer: null,
      identity: {
        accessKey: 'AKIAEXAMPLE',
        accountId: '123456789012',
        apiKey: null,
        apiKeyId: null,
        caller: 'AIDAEXAMPLE',
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '203.0.113.7',
        user: 'AIDAEXAMPLE',
        userAgent: 'flowmend-cli',
        userArn: 'arn:aws:iam::123456789012:user/ops',
      },
    },
  };
}

export const lambdaContext = { awsRequestId: 'test', functionName: 'Flowmend-Api' } as Context;
