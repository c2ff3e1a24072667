"""The REST API's stages, served as API Gateway serves a Lambda proxy integration."""

import base64
import json
import os
import threading
import time

# moto stores REST APIs but serves none of their methods in server mode. This serves
# /restapis/<id>/<stage>/_user_request_/<path> (LocalStack's path form) as API Gateway does for a
# proxy integration: the method's authorization (IAM: a valid SigV4 signature; API key: x-api-key),
# the event of the REST API's payload format 1.0, the 29 s integration timeout (504) and Lambda's
# 6 MB response limit (502).

API_GATEWAY_TIMEOUT_S = 29
LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024


class RestApiProxy:
    def __init__(self, runtime, callers):
        self.runtime = runtime
        self.callers = callers

    @staticmethod
    def split(path):
        parts = path.split("/")
        # ["", "restapis", id, stage, "_user_request_", ...]
        if len(parts) >= 5 and parts[1] == "restapis" and parts[4] == "_user_request_":
            return parts[2], parts[3], "/" + "/".join(parts[5:])
        return None

    @staticmethod
    def match(api, path):
        """The resource whose path template matches, and its path parameters; literal paths win."""
        best = None
        for resource in api.resources.values():
            template = resource.get_path()
            params = RestApiProxy.match_template(template, path)
            if params is None:
                continue
            score = (0 if "{" in template else 1, len(template))
            if best is None or score > best[0]:
                best = (score, resource, template, params)
        return (best[1], best[2], best[3]) if best else None

    @staticmethod
    def match_template(template, path):
        t = [p for p in template.split("/") if p]
        s = [p for p in path.split("/") if p]
        params = {}
        for i, part in enumerate(t):
            if part.startswith("{") and part.endswith("+}"):
                if i >= len(s):
                    return None
                params[part[1:-2]] = "/".join(s[i:])
                return params
            if i >= len(s):
                return None
            if part.startswith("{") and part.endswith("}"):
                params[part[1:-1]] = s[i]
            elif part != s[i]:
                return None
        return params if len(t) == len(s) else None

    def signature_ok(self, environ, body, region):
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        auth = environ.get("HTTP_AUTHORIZATION", "")
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return False, "Missing Authentication Token"
        fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        access_key, date, sign_region, service, _ = fields["Credential"].split("/")
        secret = self.callers.get(access_key)
        if secret is None:
            return False, "The security token included in the request is invalid."
        if service != "execute-api":
            return False, f"Credential should be scoped to correct service: 'execute-api', not '{service}'."
        signed = fields["SignedHeaders"].split(";")
        headers = {}
        for name in signed:
            key = "HTTP_" + name.upper().replace("-", "_")
            if name == "content-type":
                key = "CONTENT_TYPE"
            elif name == "content-length":
                key = "CONTENT_LENGTH"
            headers[name] = environ.get(key, "")
        query = environ.get("QUERY_STRING", "")
        url = f"http://{environ.get('HTTP_HOST')}{environ.get('PATH_INFO')}" + (f"?{query}" if query else "")
        request = AWSRequest(method=environ["REQUEST_METHOD"], url=url, data=body, headers=headers)
        request.context["timestamp"] = headers.get("x-amz-date", "")
        signer = SigV4Auth(Credentials(access_key, secret, headers.get("x-amz-security-token") or None), "execute-api", sign_region)
        expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
        if expected != fields["Signature"]:
            return False, "The request signature we calculated does not match the signature you provided."
        return True, access_key

    def __call__(self, environ, start_response, target):
        from moto.apigateway.models import apigateway_backends

        api_id, stage_name, path = target
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        account = "123456789012"
        region = os.environ.get("AWS_REGION", "us-east-1")
        backend = apigateway_backends[account][region]

        def reply(status, payload, headers=None):
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            out = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
            for name, value in (headers or {}).items():
                if name.lower() not in ("content-length",):
                    out = [h for h in out if h[0].lower() != name.lower()] + [(name, str(value))]
            from http import HTTPStatus

            start_response(f"{status} {HTTPStatus(status).phrase}", out)
            return [data]

        try:
            api = backend.get_rest_api(api_id)
        except Exception:
            return reply(404, {"message": "Not Found"})
        if stage_name not in api.stages:
            return reply(403, {"message": "Forbidden"})
        matched = self.match(api, path)
        method_name = environ["REQUEST_METHOD"]
        if matched is None:
            return reply(403, {"message": "Missing Authentication Token"})
        resource, template, path_params = matched
        method = resource.resource_methods.get(method_name) or resource.resource_methods.get("ANY")
        if method is None:
            return reply(403, {"message": "Missing Authentication Token"})
        caller_key = None
        if method.authorization_type == "AWS_IAM":
            ok, detail = self.signature_ok(environ, body, region)
            if not ok:
                return reply(403, {"message": detail})
            caller_key = detail
        if method.api_key_required:
            given = environ.get("HTTP_X_API_KEY")
            if not any(key.value == given and key.enabled for key in backend.keys.values()):
                return reply(403, {"message": "Forbidden"})
        integration = method.method_integration
        if integration is None or integration.integration_type != "AWS_PROXY":
            return reply(500, {"message": "emulator: only Lambda proxy integrations are served"})
        function_arn = integration.uri.split("/functions/", 1)[1].split("/invocations", 1)[0]
        from moto.awslambda.utils import get_backend

        fn = get_backend(account, region).get_function(function_arn)
        event = self.event(environ, body, api_id, stage_name, path, template, path_params, caller_key, account)
        result = {}

        def invoke():
            result["answer"] = self.runtime.invoke(fn, json.dumps(event))

        worker = threading.Thread(target=invoke, daemon=True)
        worker.start()
        worker.join(API_GATEWAY_TIMEOUT_S)
        if worker.is_alive():
            return reply(504, {"message": "Endpoint request timed out"})
        payload, errored, _ = result["answer"]
        if errored or len(payload.encode()) > LAMBDA_RESPONSE_LIMIT:
            return reply(502, {"message": "Internal server error"})
        try:
            response = json.loads(payload)
            status = int(response.get("statusCode", 200))
        except Exception:
            return reply(502, {"message": "Internal server error"})
        headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            headers[name] = ",".join(str(v) for v in values)
        raw = response.get("body") or ""
        data = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode()
        return reply(status, data, headers)

    @staticmethod
    def event(environ, body, api_id, stage, path, template, path_params, caller_key, account):
        from urllib.parse import parse_qsl

        headers = {}
        multi = {}
        for key, value in environ.items():
            if key.startswith("HTTP_"):
                name = "-".join(word.capitalize() for word in key[5:].split("_"))
            elif key in ("CONTENT_TYPE", "CONTENT_LENGTH") and value:
                name = "Content-Type" if key == "CONTENT_TYPE" else "Content-Length"
            else:
                continue
            headers[name] = value
            multi[name] = [value]
        pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        query = {}
        multi_query = {}
        for name, value in pairs:
            query[name] = value
            multi_query.setdefault(name, []).append(value)
        text = None
        encoded = False
        if body:
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                text = base64.b64encode(body).decode()
                encoded = True
        now = int(time.time() * 1000)
        return {
            "resource": template,
            "path": path,
            "httpMethod": environ["REQUEST_METHOD"],
            "headers": headers or None,
            "multiValueHeaders": multi or None,
            "queryStringParameters": query or None,
            "multiValueQueryStringParameters": multi_query or None,
            "pathParameters": path_params or None,
            "stageVariables": None,
            "requestContext": {
                "accountId": account,
                "apiId": api_id,
                "resourcePath": template,
                "httpMethod": environ["REQUEST_METHOD"],
                "path": f"/{stage}{path}",
                "stage": stage,
                "protocol": environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
                "requestId": base64.b32encode(os.urandom(10)).decode().lower(),
                "requestTimeEpoch": now,
                "domainName": environ.get("HTTP_HOST"),
                "identity": {
                    "sourceIp": environ.get("REMOTE_ADDR"),
                    "userAgent": environ.get("HTTP_USER_AGENT"),
                    "accessKey": caller_key,
                    "caller": caller_key,
                    "user": caller_key,
                    "userArn": f"arn:aws:iam::{account}:user/emulator-caller" if caller_key else None,
                },
            },
            "body": text,
            "isBase64Encoded": encoded,
        }


