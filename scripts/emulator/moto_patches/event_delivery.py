"""What EventBridge and EventBridge Scheduler deliver to Lambda, which moto does not.

- EventBridge rules with a Lambda target invoke it asynchronously (moto raises NotImplementedError).
- Asynchronous invocations follow Lambda's rules: a function error is retried twice, then the event
  goes to the function's dead-letter queue, if it has one (the wait between tries is shortened to
  `retry_delay_s`: Lambda waits about a minute, then two).
- Scheduler schedules and scheduled rules fire: `at()` schedules by themselves when due (Scheduler's
  one-time schedules), every schedule and rule on request (`fire`), at the fire time the request
  names, so that a test controls cron and rate fires without waiting for them. Scheduler's context
  attributes (<aws.scheduler.scheduled-time>, ...) are substituted in the target's Input.
"""

import datetime
import json
import re
import threading
import time
import uuid

from moto.awslambda.utils import get_backend as lambda_backend
from moto.events import models as events_models

ACCOUNT = "123456789012"


def iso(value):
    if isinstance(value, (int, float)):
        value = datetime.datetime.fromtimestamp(value, tz=datetime.timezone.utc)
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value


class AsyncInvoker:
    def __init__(self, region, retry_delay_s=1.0, log=print):
        self.region = region
        self.retry_delay_s = retry_delay_s
        self.log = log

    def invoke(self, function_arn, event, retries=2):
        threading.Thread(target=self._invoke, args=(function_arn, event, retries), daemon=True).start()

    def _invoke(self, function_arn, event, retries):
        try:
            fn = lambda_backend(ACCOUNT, self.region).get_function(function_arn)
        except Exception as error:
            self.log(f"emulator: no function {function_arn} for an asynchronous event: {error}")
            return
        payload = json.dumps(event)
        for attempt in range(retries + 1):
            _, errored, _ = fn._invoke_lambda(payload)
            if not errored:
                return
            if attempt < retries:
                time.sleep(self.retry_delay_s * (attempt + 1))
        target = (getattr(fn, "dead_letter_config", None) or {}).get("TargetArn")
        if target:
            self.send_to_queue(target, payload, {"ErrorMessage": "function error after 3 attempts"})

    def send_to_queue(self, queue_arn, body, attributes=None):
        from moto.sqs.models import sqs_backends

        region, _, name = queue_arn.split(":")[3], None, queue_arn.split(":")[5]
        backend = sqs_backends[ACCOUNT][region]
        message_attributes = {
            key: {"DataType": "String", "StringValue": str(value)} for key, value in (attributes or {}).items()
        }
        backend.send_message(name, body, message_attributes=message_attributes)


def target_payload(target, event):
    """What a rule target receives: its constant Input, its InputTransformer applied to the event, or the event."""
    if "Input" in target:
        return json.loads(target["Input"])
    transformer = target.get("InputTransformer")
    if transformer:
        from moto.events.utils import EventTemplateParser

        return EventTemplateParser.parse(transformer.get("InputTemplate"), transformer.get("InputPathsMap", {}), event)
    return {key: value for key, value in event.items() if key != "ingestion-time"}


def install_rule_targets(invoker):
    """Rules deliver to Lambda targets; other targets as moto does."""
    original = events_models.Rule.send_to_targets

    def send_to_targets(self, original_event, transform_input=True):
        # A scheduled rule matches no event (moto's empty pattern matches every one): it only fires on its schedule.
        if self.scheduled_expression and not getattr(self.event_pattern, "_raw_pattern", None):
            return
        if not self.event_pattern.matches_event(original_event):
            return
        lambda_targets = [t for t in self.targets if ":lambda:" in t["Arn"]]
        others = [t for t in self.targets if ":lambda:" not in t["Arn"]]
        for target in lambda_targets:
            event = dict(original_event)
            event["time"] = iso(event.get("time"))
            invoker.invoke(target["Arn"], target_payload(target, event), retries=2)
        if others:
            saved = self.targets
            self.targets = others
            try:
                original(self, original_event, transform_input)
            finally:
                self.targets = saved

    events_models.Rule.send_to_targets = send_to_targets


def scheduled_event(rule, when):
    """What a scheduled rule sends its targets at `when`."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT,
        "time": iso(when),
        "region": rule.region_name,
        "resources": [rule.arn],
        "detail": {},
        "ingestion-time": time.time(),
    }


def fire_rule(invoker, name, when, region, bus="default"):
    backend = events_models.events_backends[ACCOUNT][region]
    rule = backend.describe_rule(name, bus)
    if rule.state != "ENABLED":
        return {"fired": False, "reason": f"rule {name} is {rule.state}"}
    event = scheduled_event(rule, when)
    for target in rule.targets:
        if ":lambda:" in target["Arn"]:
            invoker.invoke(target["Arn"], target_payload(target, event), retries=2)
    return {"fired": True, "targets": len(rule.targets)}


def scheduler_input(schedule, when, attempt=1):
    text = schedule.target.get("Input", "{}")
    replacements = {
        "<aws.scheduler.scheduled-time>": iso(when),
        "<aws.scheduler.execution-id>": str(uuid.uuid4()),
        "<aws.scheduler.attempt-number>": str(attempt),
        "<aws.scheduler.schedule-arn>": schedule.arn,
    }
    for key, value in replacements.items():
        text = text.replace(key, value)
    return json.loads(text)


def fire_schedule(invoker, group, name, when, region):
    from moto.scheduler.models import scheduler_backends

    backend = scheduler_backends[ACCOUNT][region]
    schedule = backend.get_schedule(group, name)
    if schedule.state != "ENABLED":
        return {"fired": False, "reason": f"schedule {group}/{name} is {schedule.state}"}
    target = schedule.target
    if ":lambda:" not in target["Arn"]:
        return {"fired": False, "reason": f"emulator: only Lambda targets are delivered ({target['Arn']})"}
    retries = int((target.get("RetryPolicy") or {}).get("MaximumRetryAttempts", 185))
    payload = scheduler_input(schedule, when)
    invoker.invoke(target["Arn"], payload, retries=min(retries, 2))
    if schedule.schedule_expression.startswith("at(") and schedule.action_after_completion == "DELETE":
        backend.delete_schedule(group, name)
    return {"fired": True}


AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")


class OneTimeScheduleLoop:
    """Fires each `at()` schedule once, when its time comes (checked every `period_s`)."""

    def __init__(self, invoker, region, period_s=0.5):
        self.invoker = invoker
        self.region = region
        self.period_s = period_s
        self.fired = set()

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        from moto.scheduler.models import scheduler_backends

        while True:
            time.sleep(self.period_s)
            try:
                backend = scheduler_backends[ACCOUNT][self.region]
                now = datetime.datetime.now(tz=datetime.timezone.utc)
                for group in list(backend.schedule_groups.values()):
                    for schedule in list(group.schedules.values()):
                        match = AT.match(schedule.schedule_expression or "")
                        if match is None or schedule.arn in self.fired:
                            continue
                        due = datetime.datetime.fromisoformat(match.group(1)).replace(tzinfo=datetime.timezone.utc)
                        if due <= now:
                            self.fired.add(schedule.arn)
                            fire_schedule(self.invoker, group.name, schedule.name, due, self.region)
            except Exception as error:  # the loop must outlive one bad schedule
                print(f"emulator: one-time schedules: {error}")
