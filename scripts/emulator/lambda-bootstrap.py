"""One warm Python Lambda sandbox for the moto emulator: lambda-bootstrap.mjs's twin for python3.x functions.

moto_patches/lambda_runtime.py starts it as `python3 lambda-bootstrap.py <code dir> <module.function> <answer fd>`.
It imports the handler once, as Lambda's Python runtime does, then answers invocations one at a time: each
request is one JSON line on stdin, {event, context}; each answer one JSON line on the answer fd, {result} or
{error: {errorType, errorMessage, stackTrace}}, with `logs`, what the handler printed during that invocation.
"""

import importlib
import io
import json
import os
import sys
import time
import traceback

code_dir, handler_spec, answer_fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
module_name, _, function_name = handler_spec.rpartition(".")
answers = os.fdopen(answer_fd, "wb", buffering=0)


def answer(message, logs):
    line = (json.dumps({**message, "logs": logs}) + "\n").encode("utf-8")
    view = memoryview(line)
    while view:
        view = view[answers.write(view) :]


def error_payload(error, error_type=None):
    return {
        "errorType": error_type or type(error).__name__,
        "errorMessage": str(error),
        "stackTrace": traceback.format_exception(type(error), error, error.__traceback__),
    }


class Context:
    """The attributes and method of the Python runtime's context object that handlers use."""

    def __init__(self, base):
        self.function_name = base["functionName"]
        self.function_version = base["functionVersion"]
        self.invoked_function_arn = base["invokedFunctionArn"]
        self.memory_limit_in_mb = base["memoryLimitInMB"]
        self.aws_request_id = base["awsRequestId"]
        self.log_group_name = base["logGroupName"]
        self.log_stream_name = base["logStreamName"]
        self._deadline = time.monotonic() + base["timeoutMs"] / 1000

    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))


sys.path.insert(0, code_dir)
os.chdir(code_dir)
handler = None
init_error = None
try:
    handler = getattr(importlib.import_module(module_name), function_name, None)
    if not callable(handler):
        init_error = error_payload(AttributeError(f"{handler_spec} is undefined or not a function"), "Runtime.HandlerNotFound")
except ImportError as error:
    init_error = error_payload(error, "Runtime.ImportModuleError")
except Exception as error:
    init_error = error_payload(error, "Runtime.UserCodeSyntaxError" if isinstance(error, SyntaxError) else None)

real_stdout, real_stderr = sys.stdout, sys.stderr
for raw in sys.stdin.buffer:
    if not raw.strip():
        continue
    request = json.loads(raw)
    if init_error is not None:
        answer({"error": init_error}, "")
        continue
    captured = io.StringIO()
    sys.stdout = sys.stderr = captured
    try:
        result = handler(request["event"], Context(request["context"]))
        message = {"result": result}
        json.dumps(message)
    except Exception as error:
        message = {"error": error_payload(error)}
    finally:
        sys.stdout, sys.stderr = real_stdout, real_stderr
    answer(message, captured.getvalue())
