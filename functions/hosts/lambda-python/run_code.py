"""The RunCode Task on AWS: pflow's `code` node in a Python Lambda (python3.12).

The same contract as the Node runners (functions/hosts/lambda/run-node.ts with functions/nodes/code.ts):
a RunOutcome event in (`{kind: "run", runId, seq, node: {id, type: "code", params | paramsRef, upload?}}`),
a RunnerResult out (`{kind: "ok", outputs, action, durationMs}` or `{kind: "failed", error, outputs?, durationMs}`).
The user's code runs in its own `python -I` process (code_wrapper.py, written at synth from
functions/nodes/code-python.ts, the wrapper the local host runs), with none of the Lambda's variables
(its role's credentials among them), killed at the node's timeout. test/hosts/lambda/run-code-python.test.ts
runs this file and the local runner on the same events and compares what they return.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

WRAPPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "code_wrapper.py")
DEFAULT_TIMEOUT_S = 30
# What one code node may print and return, in all (functions/nodes/code.ts: MAX_ANSWER_BYTES).
MAX_ANSWER_BYTES = 10 * 1024 * 1024
MAX_PRINT_BYTES = 1024 * 1024
# Outputs larger than this go up to the upload URL (functions/core/blob-store.ts: MAX_INLINE_OUTPUT_BYTES).
MAX_INLINE_OUTPUT_BYTES = 200 * 1024
# What a command may see of the runner's environment (functions/nodes/command-env.ts), never AWS_*.
COMMAND_ENV_ALLOW_LIST = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
ENGINE_VARIABLE = re.compile(r"^(AWS_|ANTHROPIC_|FLOWMEND_)")
SECRET_OPEN = "\u27e6flowmend-secret:"
IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


# The names the state machine's Retry and the engine match on (functions/core/errors.ts).
class TransientError(Exception):
    pass


class ConfigurationError(Exception):
    pass


class InvalidInputError(Exception):
    pass


class CorruptItemError(Exception):
    pass


def failed(code, message, started, details=None, outputs=None):
    result = {"kind": "failed", "error": {"code": code, "message": message}, "durationMs": elapsed(started)}
    if details is not None:
        result["error"]["details"] = details
    if outputs is not None:
        result["outputs"] = outputs
    return result


def elapsed(started):
    return (time.monotonic() - started) * 1000


def compact(value):
    """JSON as JavaScript's JSON.stringify writes it (no spaces), so sizes and hashes agree with the engine's."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def http(method, url, what, body=None):
    # urllib's default body type (a form) is what a server may parse and drop: an S3 object is the body as sent.
    headers = {} if body is None else {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=None if body is None else body.encode("utf-8"), method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        if e.code >= 500 or e.code == 429:
            raise TransientError(f"{what} failed: HTTP {e.code}") from e
        raise ConfigurationError(f"{what} was refused: HTTP {e.code} {e.read().decode('utf-8', 'replace')[:500]}") from e
    except (urllib.error.URLError, OSError) as e:
        raise TransientError(f"{what} failed: {e}") from e


def read_params(node):
    """Params inline, or by reference (a presigned GET), checked against the reference's size and hash."""
    ref = node.get("paramsRef")
    if ref is None:
        return node.get("params", {})
    body = http("GET", ref["url"], "reading a node's params")
    raw = body.encode("utf-8")
    expected = ref["ref"]
    if len(raw) != expected["bytes"] or hashlib.sha256(raw).hexdigest() != expected["sha256"]:
        raise CorruptItemError(f"blob {expected['key']} does not match its reference ({len(raw)} bytes, expected {expected['bytes']})")
    return json.loads(body)


def holds_secret(value):
    if isinstance(value, str):
        return SECRET_OPEN in value
    if isinstance(value, list):
        return any(holds_secret(v) for v in value)
    if isinstance(value, dict):
        return any(holds_secret(k) or holds_secret(v) for k, v in value.items())
    return False


def params_problems(params):
    """CodeParamsSchema (functions/nodes/code-spec.ts), message for message where it matters."""
    if not isinstance(params, dict):
        return ["params must be an object"]
    problems = []
    unknown = [k for k in params if k not in ("code", "inputs", "timeout", "requires")]
    if unknown:
        problems.append(f"unknown param{'s' if len(unknown) > 1 else ''} {', '.join(json.dumps(k) for k in unknown)}; valid params: code, inputs, timeout, requires")
    code = params.get("code")
    if not isinstance(code, str):
        problems.append('param "code": code is required: the Python to run (a ```python code block)')
    elif code == "":
        problems.append('param "code": code must not be empty')
    inputs = params.get("inputs", {})
    if not isinstance(inputs, dict):
        problems.append('param "inputs": an object of input names to values')
    else:
        problems.extend(f'param "inputs.{k}": an input name is a Python identifier' for k in inputs if not IDENTIFIER.match(k))
    timeout = params.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        problems.append('param "timeout": timeout must be greater than 0')
    if params.get("requires"):
        problems.append('param "requires": requires is not supported: flowmend installs no packages; use what the python3 where the node runs has')
    return problems


_scrubbed = False


def scrub_environ_block():
    """The user's code could read this process's environment as it started (`/proc/<ppid>/environ`): the
    kernel shows the block the process was started with, which holds the role's credentials. Once, before
    the first code runs, the values of AWS_*, ANTHROPIC_* and FLOWMEND_* are overwritten with `x` there,
    through /proc/self/mem (functions/nodes/engine-environ.ts does the same for the Node runners).
    `os.environ` is Python's own copy, made at start-up: it keeps the values. Linux only; else nothing."""
    global _scrubbed
    if _scrubbed:
        return
    _scrubbed = True
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        # Fields after the command name: the first is field 3 (state); env_start is field 50, env_end 51.
        fields = stat[stat.rindex(b")") + 2 :].split(b" ")
        start, end = int(fields[47]), int(fields[48])
        with open("/proc/self/environ", "rb") as f:
            block = f.read()
        if start <= 0 or end - start != len(block):
            return
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            offset = 0
            for entry in block.split(b"\0"):
                name, eq, value = entry.partition(b"=")
                if eq and value and ENGINE_VARIABLE.match(name.decode("latin-1")):
                    mem.seek(start + offset + len(name) + 1)
                    mem.write(b"x" * len(value))
                offset += len(entry) + 1
    except (OSError, ValueError, IndexError):
        pass


def run_wrapper(params, started):
    timeout_s = params.get("timeout") or DEFAULT_TIMEOUT_S
    env = {k: os.environ[k] for k in COMMAND_ENV_ALLOW_LIST if k in os.environ and not ENGINE_VARIABLE.match(k)}
    env.setdefault("HOME", "/tmp")
    job = json.dumps({"code": params["code"], "inputs": params.get("inputs") or {}, "max_output": MAX_PRINT_BYTES})
    scrub_environ_block()
    try:
        child = subprocess.Popen([sys.executable, "-I", WRAPPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd="/tmp")
    except OSError as e:
        return failed("SPAWN_FAILED", f"cannot start {sys.executable}: {e}", started)
    try:
        answer, errors = child.communicate(job.encode("utf-8"), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return failed("TIMEOUT", f"Python code timed out after {timeout_s:g} s", started, {"timeout_s": timeout_s})
    if len(answer) > MAX_ANSWER_BYTES:
        return failed(
            "OUTPUT_TOO_LARGE",
            f"the code's result and prints take {len(answer)} bytes, over the {MAX_ANSWER_BYTES} a code node may return",
            started,
        )
    try:
        parsed = json.loads(answer.decode("utf-8"))
    except ValueError:
        return failed("PYTHON_FAILED", f"python3 exited {child.returncode} without an answer: {errors.decode('utf-8', 'replace')[-2000:]}", started)
    outputs = {"result": parsed.get("result"), "stdout": parsed.get("stdout") or "", "stderr": parsed.get("stderr") or ""}
    error = parsed.get("error")
    if error:
        return failed("PYTHON_ERROR", f"{error['type']}: {error['message']}", started, {"type": error["type"], "traceback": error["traceback"]}, outputs)
    nxt = parsed.get("next")
    return {"kind": "ok", "outputs": outputs, "action": "default" if nxt is None else nxt, "durationMs": elapsed(started)}


def shrink(result, upload):
    """Outputs over the inline limit go up to the upload URL (a presigned PUT); the result keeps a reference."""
    if upload is None or "outputs" not in result:
        return result
    body = compact(result["outputs"])
    raw = body.encode("utf-8")
    if len(raw) <= MAX_INLINE_OUTPUT_BYTES:
        return result
    http("PUT", upload["url"], "uploading a large node output", body)
    return {**result, "outputs": {"$blob": {"key": upload["key"], "bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}}}


def handler(event, context=None):
    started = time.monotonic()
    node = event.get("node") if isinstance(event, dict) else None
    if not isinstance(node, dict) or event.get("kind") != "run" or not isinstance(event.get("seq"), int):
        raise InvalidInputError("Bad RunNode event: expected {kind: 'run', runId, seq, node}")
    if node.get("type") != "code":
        raise InvalidInputError(f'Bad RunNode event: node "{node.get("id")}" has type "{node.get("type")}", this handler runs "code"')
    params = read_params(node)
    if holds_secret(params):
        return failed(
            "SECRET_INPUT_UNSUPPORTED",
            "a secret input read from Secrets Manager or SSM (`from`) reaches this code node: the Python runner on AWS does not read secrets; pass it to a shell node's env instead",
            started,
        )
    problems = params_problems(params)
    if problems:
        return failed("PARAMS_INVALID", f"Invalid params for code node: {'; '.join(problems)}", started)
    return shrink(run_wrapper(params, started), node.get("upload"))
