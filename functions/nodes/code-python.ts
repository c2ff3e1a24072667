/**
 * The Python that runs a `code` node (pflow's): it reads `{code, inputs, max_output}` as JSON on stdin,
 * binds each input as a variable (JSON text parsed where the code annotates a `dict` or `list`, outer
 * annotated types checked as pflow does), runs the code with its prints captured, and writes one JSON
 * object on its own stdout: `{result, next, stdout, stderr}` or `{error: {type, message, traceback}}`.
 * Run as `python3 -I -c <this>` (isolated: no user site-packages, no PYTHON* variables).
 */
export const PYTHON_CODE_WRAPPER = `
import ast, io, json, sys, traceback, typing
from typing import Any, Optional

def main():
    job = json.loads(sys.stdin.read())
    code, inputs, cap = job["code"], job.get("inputs") or {}, int(job.get("max_output", 1048576))
    types = {"str": str, "int": int, "float": (int, float), "bool": bool, "dict": dict, "list": list, "tuple": (list, tuple), "set": (list, set)}
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        return {"error": {"type": "SyntaxError", "message": f"line {e.lineno}: {e.msg}", "traceback": ""}}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is None and node.target.id in inputs:
            name, ann = node.target.id, node.annotation
            outer = ann.value.id if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) else ann.id if isinstance(ann, ast.Name) else None
            value = inputs[name]
            if outer in ("dict", "list") and isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    pass
                inputs[name] = value
            want = types.get(outer or "")
            if want is not None and not isinstance(value, want):
                return {"error": {"type": "TypeError", "message": f"input '{name}' is declared {outer} but is {type(value).__name__}", "traceback": ""}}
    scope = {"__name__": "__pflow_code__", "Any": Any, "Optional": Optional, "typing": typing}
    scope.update(inputs)
    out, err = io.StringIO(), io.StringIO()
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        exec(compile(tree, "<code>", "exec"), scope)
    except BaseException as e:
        sys.stdout, sys.stderr = real_out, real_err
        return {"error": {"type": type(e).__name__, "message": str(e), "traceback": traceback.format_exc()[-4000:]}, "stdout": out.getvalue()[:cap], "stderr": err.getvalue()[:cap]}
    sys.stdout, sys.stderr = real_out, real_err
    nxt = scope.get("next")
    return {"result": scope.get("result"), "next": nxt if isinstance(nxt, str) else None, "stdout": out.getvalue()[:cap], "stderr": err.getvalue()[:cap]}

answer = main()
try:
    text = json.dumps(answer, default=repr)
except (TypeError, ValueError) as e:
    text = json.dumps({"error": {"type": "TypeError", "message": f"result is not JSON: {e}", "traceback": ""}})
sys.stdout.write(text)
`;
