"""Lambda without Docker: each function's deployed bundle in warm Node processes (Python ones in python3)."""

import base64
import hashlib
import io
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

from moto.awslambda import models as lambda_models

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOTSTRAP = os.path.join(HERE, "lambda-bootstrap.mjs")
# python3.x functions (the code node's runner) run in this interpreter, the machine's python3 that runs moto.
PYTHON_BOOTSTRAP = os.path.join(HERE, "lambda-bootstrap.py")


def access_key_of(function_name: str) -> str:
    """A stable, distinct access key per function: 20 characters, as AWS's are."""
    return "AKIAFM" + hashlib.sha256(function_name.encode()).hexdigest()[:14].upper()


def is_python(fn):
    return (fn.run_time or "").startswith("python")


class Sandbox:
    """One warm Node (or Python) process serving one function's invocations, one at a time."""

    def __init__(self, key, argv, env, cwd):
        read_fd, write_fd = os.pipe()
        self.key = key
        self.process = subprocess.Popen(
            [*argv, str(write_fd)],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
        # The bootstrap writes its answers to the pipe's write end, whose number it gets as its last argument.
        os.close(write_fd)
        self.answers = os.fdopen(read_fd, "rb")
        self.lines: "queue.Queue[bytes]" = queue.Queue()
        self.stderr_tail = b""
        threading.Thread(target=self._read_answers, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_answers(self):
        for line in self.answers:
            self.lines.put(line)
        self.lines.put(b"")

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr_tail = (self.stderr_tail + line)[-8192:]

    def invoke(self, event, context, timeout_s):
        request = json.dumps({"event": event, "context": context}) + "\n"
        try:
            self.process.stdin.write(request.encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            return None
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            self.kill()
            return {"timedOut": True}
        if line == b"":
            return None
        return json.loads(line)

    def alive(self):
        return self.process.poll() is None

    def kill(self):
        try:
            os.killpg(self.process.pid, 9)
        except ProcessLookupError:
            pass


class LambdaRuntime:
    def __init__(self, state_dir, node, port, calls_file):
        self.state_dir = state_dir
        self.node = node
        self.port = port
        self.calls_file = calls_file
        self.lock = threading.Lock()
        self.unpacking = threading.Lock()
        self.idle = {}
        self.keys = {}
        self.sandboxes = []

    def code_dir(self, fn):
        digest = fn.code_sha_256 if hasattr(fn, "code_sha_256") else hashlib.sha256(fn.code_bytes).hexdigest()
        target = os.path.join(self.state_dir, "lambda", digest.replace("/", "_").replace("+", "-"))
        # Concurrent first calls of one function once unpacked into one shared `.partial` directory: one
        # rename could carry a file the other was still writing. One unpacking at a time, into a directory of
        # its own, checked again under the lock.
        with self.unpacking:
            if not os.path.isdir(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                partial = tempfile.mkdtemp(prefix=os.path.basename(target) + ".", dir=os.path.dirname(target))
                with zipfile.ZipFile(io.BytesIO(fn.code_bytes)) as archive:
                    archive.extractall(partial)
                os.rename(partial, target)
        return target

    def environment(self, fn, log_group):
        key = access_key_of(fn.function_name)
        with self.lock:
            self.keys[key] = {"functionName": fn.function_name, "role": fn.role, "functionArn": fn.function_arn}
        interpreter = sys.executable if is_python(fn) else self.node
        env = {
            # Lambda's runtimes put their interpreter first (/var/lang/bin): a process a function starts finds it.
            "PATH": f"{os.path.dirname(interpreter)}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "en_US.UTF-8",
            "TZ": ":UTC",
            "LAMBDA_TASK_ROOT": "/var/task",
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{fn.run_time}",
            "AWS_LAMBDA_FUNCTION_NAME": fn.function_name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(fn.memory_size),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": log_group,
            "AWS_REGION": fn.region,
            "AWS_DEFAULT_REGION": fn.region,
            "AWS_ACCESS_KEY_ID": key,
            "AWS_SECRET_ACCESS_KEY": "emulator-secret-" + key,
            "AWS_SESSION_TOKEN": "emulator-session-" + key,
            "_HANDLER": fn.handler or "index.handler",
        }
        # Lambda's advanced logging controls tell the function its log format and level (Powertools Logger reads them).
        logging = getattr(fn, "logging_config", None) or {}
        if logging.get("LogFormat") == "JSON":
            env["AWS_LAMBDA_LOG_FORMAT"] = "JSON"
            env["AWS_LAMBDA_LOG_LEVEL"] = logging.get("ApplicationLogLevel") or "INFO"
        env.update({k: str(v) for k, v in (fn.environment_vars or {}).items()})
        # Reserved variables Lambda sets whatever the function declares.
        env["AWS_ENDPOINT_URL"] = f"http://localhost:{self.port}"
        env["TMPDIR"] = os.path.join(self.state_dir, "tmp")
        os.makedirs(env["TMPDIR"], exist_ok=True)
        return env

    def invoke(self, fn, event_text):
        log_group = (getattr(fn, "logging_config", None) or {}).get("LogGroup") or fn.logs_group_name
        env = self.environment(fn, log_group)
        code = self.code_dir(fn)
        handler = fn.handler or "index.handler"
        pool_key = (fn.function_arn, code, handler, json.dumps(env, sort_keys=True))
        with self.lock:
            idle = self.idle.setdefault(pool_key, [])
            sandbox = None
            while idle:
                candidate = idle.pop()
                if candidate.alive():
                    sandbox = candidate
                    break
        if sandbox is None:
            argv = [sys.executable, "-I", PYTHON_BOOTSTRAP] if is_python(fn) else [self.node, BOOTSTRAP]
            sandbox = Sandbox(pool_key, [*argv, code, handler], env, code)
            with self.lock:
                self.sandboxes.append(sandbox)
        timeout_s = float(fn.timeout or 3)
        request_id = base64.b32encode(os.urandom(10)).decode().lower()
        context = {
            "functionName": fn.function_name,
            "functionVersion": "$LATEST",
            "invokedFunctionArn": fn.function_arn,
            "memoryLimitInMB": str(fn.memory_size),
            "awsRequestId": request_id,
            "logGroupName": log_group,
            "logStreamName": request_id,
            "timeoutMs": int(timeout_s * 1000),
        }
        event = json.loads(event_text) if isinstance(event_text, str) else event_text
        answer = sandbox.invoke(event, context, timeout_s)
        if answer is None or "timedOut" in answer:
            sandbox.kill()
            if answer is None:
                message = f"RequestId: {request_id} Error: Runtime exited with error: {sandbox.stderr_tail.decode(errors='replace')[-2000:]}"
                payload = {"errorType": "Runtime.ExitError", "errorMessage": message}
            else:
                payload = {"errorType": "Sandbox.Timedout", "errorMessage": f"RequestId: {request_id} Error: Task timed out after {timeout_s:.2f} seconds"}
            self.save_logs(fn, log_group, request_id, json.dumps(payload))
            return json.dumps(payload), True, ""
        with self.lock:
            self.idle.setdefault(pool_key, []).append(sandbox)
        self.save_logs(fn, log_group, request_id, answer.get("logs", ""))
        if "error" in answer:
            return json.dumps(answer["error"]), True, answer.get("logs", "")
        return json.dumps(answer.get("result")), False, answer.get("logs", "")

    def save_logs(self, fn, log_group, request_id, output):
        lines = [line for line in output.splitlines() if line.strip()]
        if not lines:
            return
        try:
            fn.logs_backend.ensure_log_group(log_group)
            stream = time.strftime("%Y/%m/%d") + f"/[$LATEST]{request_id}"
            fn.logs_backend.create_log_stream(log_group, stream)
            now = int(time.time() * 1000)
            fn.logs_backend.put_log_events(log_group, stream, [{"timestamp": now, "message": line} for line in lines])
        except Exception as error:  # logs must never fail an invocation
            print(f"emulator: could not file logs of {fn.function_name}: {error}", file=sys.stderr)

    def stop(self):
        for sandbox in self.sandboxes:
            sandbox.kill()


def install(runtime):
    """Every invocation of every function, by any caller (the API, Step Functions, logs, events), runs here."""
    original_init = lambda_models.LambdaFunction.__init__

    def init_with_configs(self, account_id, spec, region, version=1):
        original_init(self, account_id, spec, region, version)
        self.logging_config = spec.get("LoggingConfig") or {}
        self.dead_letter_config = spec.get("DeadLetterConfig") or {}

    def invoke_lambda(self, event=None):
        return runtime.invoke(self, event if isinstance(event, str) else json.dumps(event or {}))

    original_from_cloudformation = lambda_models.LambdaFunction.create_from_cloudformation_json.__func__

    def from_cloudformation_with_configs(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        fn = original_from_cloudformation(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        # moto's CloudFormation keeps a few properties of a function only: its log group and level, and its X-Ray mode, are lost.
        props = cloudformation_json.get("Properties") or {}
        if props.get("LoggingConfig"):
            fn.logging_config = props["LoggingConfig"]
        if props.get("TracingConfig"):
            fn.tracing_config = props["TracingConfig"]
        return fn

    lambda_models.LambdaFunction.__init__ = init_with_configs
    lambda_models.LambdaFunction.create_from_cloudformation_json = classmethod(from_cloudformation_with_configs)
    lambda_models.LambdaFunction._invoke_lambda = invoke_lambda
