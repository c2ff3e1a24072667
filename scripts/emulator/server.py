"""moto's server, made to run flowmend's deployed stack on a machine without Docker (moto 5.2.1 only).

What it changes in moto (each module of moto_patches/ says how and why):
- lambda_runtime: functions run their deployed bundles in warm Node processes (no Docker), with the
  function's environment and an access key of its own, and AWS_ENDPOINT_URL pointing back here;
- cloudformation: DependsOn, stack outputs after a change set, and the resource types moto skips that
  the stack's behaviour depends on;
- step_functions: state machines created where they execute, with substitutions, type and logging;
  execution logs and status-change events as AWS sends them;
- rest_api: the REST API's stages served as API Gateway serves a Lambda proxy integration;
- event_delivery: EventBridge rules and Scheduler schedules deliver to Lambda, asynchronously;
- call_recorder: every request a function makes, for the IAM check of the tests.

Control routes (not AWS's): GET /_emulator/health, POST /_emulator/fire-rule {name, time},
POST /_emulator/fire-schedule {group, name, time}.

Usage: python3 server.py --port PORT --state-dir DIR --node NODE [--calls FILE] [--caller KEY:SECRET]
"""

import argparse
import datetime
import json
import os
import signal
import sys

import moto

if moto.__version__ != "5.2.1":
    sys.exit(f"scripts/emulator/server.py patches moto 5.2.1; this is moto {moto.__version__}")

from moto.core.config import default_user_config  # noqa: E402

default_user_config["stepfunctions"]["execute_state_machine"] = True

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from moto_patches import cloudformation, event_delivery, lambda_runtime, step_functions  # noqa: E402,F401
from moto_patches.call_recorder import CallRecorder  # noqa: E402
from moto_patches.rest_api import RestApiProxy  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--node", required=True, help="the Node binary functions run on (the runtime they deploy to)")
    parser.add_argument("--calls", default=None, help="JSON-lines file of the calls functions make")
    parser.add_argument("--caller", action="append", default=[], help="KEY:SECRET of a principal that may sign REST API requests")
    args = parser.parse_args()
    os.makedirs(args.state_dir, exist_ok=True)
    os.environ["MOTO_PORT"] = str(args.port)
    os.environ.setdefault("AWS_REGION", args.region)

    runtime = lambda_runtime.LambdaRuntime(args.state_dir, args.node, args.port, args.calls)
    lambda_runtime.install(runtime)
    invoker = event_delivery.AsyncInvoker(args.region)
    event_delivery.install_rule_targets(invoker)

    def announce(execution, status):
        if step_functions.MACHINE_TYPES.get(execution.state_machine.arn, "STANDARD") != "STANDARD":
            return
        from moto.events.models import events_backends

        events_backends[event_delivery.ACCOUNT][args.region].put_events([step_functions.status_change_event(execution, status)])

    step_functions.install(announce)
    event_delivery.OneTimeScheduleLoop(invoker, args.region).start()

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import run_simple

    moto_app = DomainDispatcherApplication(create_backend_app)
    recorder = CallRecorder(moto_app, runtime, args.calls)
    proxy = RestApiProxy(runtime, dict(caller.split(":", 1) for caller in args.caller))

    def control(environ, start_response, route):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(length) or b"{}") if length else {}
        when = datetime.datetime.fromisoformat(body["time"].replace("Z", "+00:00")) if "time" in body else datetime.datetime.now(datetime.timezone.utc)
        try:
            if route == "health":
                answer = {"ok": True, "moto": moto.__version__}
            elif route == "fire-rule":
                answer = event_delivery.fire_rule(invoker, body["name"], when, args.region)
            elif route == "fire-schedule":
                answer = event_delivery.fire_schedule(invoker, body.get("group", "default"), body["name"], when, args.region)
            else:
                start_response("404 Not Found", [("Content-Type", "application/json")])
                return [b'{"error":"no such emulator route"}']
        except Exception as error:
            start_response("400 Bad Request", [("Content-Type", "application/json")])
            return [json.dumps({"error": f"{type(error).__name__}: {error}"}).encode()]
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(answer).encode()]

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/_emulator/"):
            return control(environ, start_response, path[len("/_emulator/"):])
        target = RestApiProxy.split(path)
        if target is not None:
            return proxy(environ, start_response, target)
        return recorder(environ, start_response)

    def stop(_signal, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        run_simple(args.host, args.port, app, threaded=True)
    except KeyboardInterrupt:
        pass
    finally:
        runtime.stop()


if __name__ == "__main__":
    main()
