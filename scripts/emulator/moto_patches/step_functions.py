"""Step Functions as the stack uses it, on moto's executing backend (LocalStack's ASL interpreter).

- CloudFormation creates state machines in the executing backend (moto's model creates them in the
  other one, which never runs them), with the template's DefinitionSubstitutions applied, its type and
  its logging configuration (moto ignores all three).
- An execution logs its history to the machine's log group, as Step Functions does at the machine's
  level, except where AWS does not: an execution whose name has a character outside 0-9A-Za-z-_
  ("Step Functions ... logging with CloudWatch Logs is disabled for such names").
- A STANDARD machine's execution that ends sends "Step Functions Execution Status Change" to the
  default event bus (EXPRESS machines send none, as on AWS). moto has one kind of machine (Standard
  semantics for both): the machine's declared type decides only logging and events here.
"""

import datetime
import json
import re
import threading

from moto.core.common_models import CloudFormationModel
from moto.stepfunctions.parser.asl.eval.event.logging import CloudWatchLoggingConfiguration, CloudWatchLoggingSession
from moto.stepfunctions.parser.backend import execution as execution_module
from moto.stepfunctions.parser.models import stepfunctions_parser_backends

LOGGABLE_NAME = re.compile(r"^[0-9A-Za-z_-]+$")
ENDED = {"FAILED", "TIMED_OUT", "ABORTED", "SUCCEEDED"}

# The declared type of each machine, by ARN (moto keeps none).
MACHINE_TYPES: dict[str, str] = {}


def substitute(definition, substitutions):
    for key, value in (substitutions or {}).items():
        definition = definition.replace("${" + key + "}", str(value))
    return definition


def logging_configuration(cfn_logging):
    """CloudFormation's LoggingConfiguration, in the API's shape."""
    if not cfn_logging:
        return None
    return {
        "level": cfn_logging.get("Level", "OFF"),
        "includeExecutionData": bool(cfn_logging.get("IncludeExecutionData", False)),
        "destinations": [
            {"cloudWatchLogsLogGroup": {"logGroupArn": d["CloudWatchLogsLogGroup"]["LogGroupArn"]}}
            for d in cfn_logging.get("Destinations", [])
            if "CloudWatchLogsLogGroup" in d
        ],
    }


class StepFunctionsStateMachine(CloudFormationModel):
    """AWS::StepFunctions::StateMachine in the backend that executes."""

    __module__ = "moto.stepfunctions.flowmend_emulator"

    def __init__(self, arn, name):
        self.arn = arn
        self.name = name

    @staticmethod
    def cloudformation_type():
        return "AWS::StepFunctions::StateMachine"

    @staticmethod
    def cloudformation_name_type():
        return "StateMachineName"

    @property
    def physical_resource_id(self):
        return self.arn

    @classmethod
    def has_cfn_attr(cls, attr):
        return attr in ["Arn", "Name"]

    def get_cfn_attribute(self, attribute_name):
        if attribute_name == "Arn":
            return self.arn
        if attribute_name == "Name":
            return self.name
        raise KeyError(attribute_name)

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        props = cloudformation_json["Properties"]
        name = props.get("StateMachineName") or resource_name
        definition = props.get("DefinitionString") or json.dumps(props.get("Definition", {}))
        definition = substitute(definition, props.get("DefinitionSubstitutions"))
        backend = stepfunctions_parser_backends[account_id][region_name]
        machine = backend.create_state_machine(
            name=name,
            definition=definition,
            roleArn=props.get("RoleArn", ""),
            loggingConfiguration=logging_configuration(props.get("LoggingConfiguration")),
            tracingConfiguration={"enabled": bool((props.get("TracingConfiguration") or {}).get("Enabled"))},
        )
        machine_type = props.get("StateMachineType", "STANDARD")
        machine.type = machine_type
        MACHINE_TYPES[machine.arn] = machine_type
        return cls(machine.arn, name)

    @classmethod
    def delete_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name):
        backend = stepfunctions_parser_backends[account_id][region_name]
        try:
            backend.delete_state_machine(resource_name)
        except Exception:
            pass


def publish_history_log(self, history_log):
    """
    One execution log record, as Step Functions writes it (event_timestamp in epoch milliseconds, as a
    string). The ported LocalStack code expects a datetime where moto passes an ISO string, and hands the
    logs backend objects it cannot read: as it is, the first logged event fails the execution.
    """
    from moto.logs.exceptions import ResourceNotFoundException

    stamp = history_log["event_timestamp"]
    if isinstance(stamp, str):
        stamp = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    millis = int(stamp.timestamp() * 1000)
    record = {**history_log, "event_timestamp": str(millis)}
    event = {"timestamp": millis, "message": json.dumps(record, default=str, separators=(",", ":"))}
    group, stream = self.configuration.log_group_name, self.configuration.log_stream_name
    try:
        self._logs_client.put_log_events(group, stream, [event])
    except ResourceNotFoundException:
        try:
            self._logs_client.create_log_stream(group, stream)
            self._logs_client.put_log_events(group, stream, [event])
        except Exception as error:
            print(f"emulator: no execution log in {group}: {error}")


def install_start_execution():
    """
    `arn:aws:states:::states:startExecution` (how a run continues as a new execution): the ported code
    passes ASL's parameter names (`StateMachineArn`) to boto3, which names them `stateMachineArn`, and the
    task fails with KeyError. LocalStack renames them; this does the same for Step Functions' own API.
    """
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service_sfn as sfn_task

    original = sfn_task.StateTaskServiceSfn._normalise_parameters

    def normalise(self, parameters, boto_service_name=None, service_action_name=None):
        original(self, parameters, boto_service_name=boto_service_name, service_action_name=service_action_name)
        for key in [k for k in parameters if k[:1].isupper()]:
            parameters[key[0].lower() + key[1:]] = parameters.pop(key)

    sfn_task.StateTaskServiceSfn._normalise_parameters = normalise


def install(on_status_change):
    """Logging sessions for executions, and `on_status_change(execution, status)` when one ends."""
    install_start_execution()
    original_init = execution_module.Execution.__init__

    def init_with_logging(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        if self._cloud_watch_logging_session is not None or not LOGGABLE_NAME.match(self.name or ""):
            return
        config = getattr(self.state_machine, "loggingConfiguration", None)
        if not config or config.get("level", "OFF") == "OFF":
            return
        cw = CloudWatchLoggingConfiguration.from_logging_configuration(self.state_machine.arn, config)
        if cw is not None:
            self._cloud_watch_logging_session = CloudWatchLoggingSession(self.exec_arn, cw)

    execution_module.Execution.__init__ = init_with_logging
    CloudWatchLoggingSession.publish_history_log = publish_history_log
    # moto deep-copies a machine, its past executions included, at each start: executions (their worker
    # threads, their logging sessions and the logs backend's lock) are shared, not copied.
    execution_module.Execution.__deepcopy__ = lambda self, memo: self

    original_reflect = execution_module.BaseExecutionWorkerCommunication._reflect_execution_status

    def reflect_and_announce(self):
        original_reflect(self)
        execution = self.execution
        status = execution.exec_status.value if execution.exec_status is not None else None
        if status in ENDED:
            threading.Thread(target=on_status_change, args=(execution, status), daemon=True).start()

    execution_module.BaseExecutionWorkerCommunication._reflect_execution_status = reflect_and_announce


def status_change_event(execution, status):
    """The event Step Functions sends to the default bus when a Standard execution ends."""

    def millis(value):
        if value is None:
            return None
        if isinstance(value, datetime.datetime):
            return int(value.timestamp() * 1000)
        return value

    return {
        "Source": "aws.states",
        "DetailType": "Step Functions Execution Status Change",
        "Resources": [execution.exec_arn],
        "Detail": json.dumps(
            {
                "executionArn": execution.exec_arn,
                "stateMachineArn": execution.state_machine.arn,
                "name": execution.name,
                "status": status,
                "startDate": millis(execution.start_date),
                "stopDate": millis(execution.stop_date),
                "input": execution.execution_input,
                "output": json.dumps(execution.output) if execution.output is not None else None,
                "error": execution.error,
                "cause": execution.cause,
            }
        ),
    }
