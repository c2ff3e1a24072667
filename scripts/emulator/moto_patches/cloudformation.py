"""CloudFormation as `cdk deploy` needs it: DependsOn, outputs of change sets, the types moto skips."""

import json

from moto.cloudformation import models as cfn_models
from moto.cloudformation import parsing as cfn_parsing
from moto.core.common_models import CloudFormationModel

# moto creates a resource early when another one refers to it (the REST API's Stage refers to its
# Deployment), and then skips the DependsOn that orders it: the Deployment came before the methods it
# depends on, and API Gateway refuses a deployment of an API without methods. Create what a resource
# depends on first, as CloudFormation does.

_original_parse_and_create = cfn_parsing.parse_and_create_resource


def _parse_and_create_after_dependencies(logical_id, resource_json, resources_map, account_id, region_name):
    depends_on = resource_json.get("DependsOn", [])
    for dependency in [depends_on] if isinstance(depends_on, str) else depends_on:
        resources_map[dependency]
    return _original_parse_and_create(logical_id, resource_json, resources_map, account_id, region_name)


cfn_parsing.parse_and_create_resource = _parse_and_create_after_dependencies

# A stack created through a change set (as `cdk deploy` does) keeps the outputs of its empty
# REVIEW_IN_PROGRESS template: read them again from the template the change set applied.
_original_execute_change_set = cfn_models.CloudFormationBackend.execute_change_set


def _execute_change_set_with_outputs(self, change_set_name, stack_name=None):
    _original_execute_change_set(self, change_set_name, stack_name)
    for stack in self.stacks.values():
        if stack.status.endswith("_COMPLETE") and stack.template:
            stack._parse_template()
            stack.output_map = stack._create_output_map()


cfn_models.CloudFormationBackend.execute_change_set = _execute_change_set_with_outputs


# --- CloudFormation: types moto skips ---------------------------------------------------------------


class LogsSubscriptionFilter(CloudFormationModel):
    """AWS::Logs::SubscriptionFilter: the Express watcher's feed (moto's logs deliver to a Lambda)."""
    # moto files models by the second part of their module name.
    __module__ = "moto.logs.flowmend_emulator"


    def __init__(self, name, group, account_id, region):
        self.name = name
        self.group = group
        self.account_id = account_id
        self.region = region

    @staticmethod
    def cloudformation_type():
        return "AWS::Logs::SubscriptionFilter"

    @staticmethod
    def cloudformation_name_type():
        return "FilterName"

    @property
    def physical_resource_id(self):
        return self.name

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        from moto.logs.models import logs_backends

        props = cloudformation_json["Properties"]
        name = props.get("FilterName") or resource_name
        logs_backends[account_id][region_name].put_subscription_filter(
            props["LogGroupName"], name, props.get("FilterPattern", ""), props["DestinationArn"], props.get("RoleArn", "")
        )
        return cls(name, props["LogGroupName"], account_id, region_name)

    @classmethod
    def delete_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name):
        from moto.logs.models import logs_backends

        props = cloudformation_json["Properties"]
        try:
            logs_backends[account_id][region_name].delete_subscription_filter(props["LogGroupName"], props.get("FilterName") or resource_name)
        except Exception:
            pass


class CloudWatchAlarm(CloudFormationModel):
    # moto files models by the second part of their module name.
    __module__ = "moto.cloudwatch.flowmend_emulator"

    def __init__(self, name):
        self.name = name

    @staticmethod
    def cloudformation_type():
        return "AWS::CloudWatch::Alarm"

    @staticmethod
    def cloudformation_name_type():
        return "AlarmName"

    @property
    def physical_resource_id(self):
        return self.name

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        from moto.cloudwatch.models import cloudwatch_backends

        props = cloudformation_json["Properties"]
        name = props.get("AlarmName") or resource_name
        cloudwatch_backends[account_id][region_name].put_metric_alarm(
            name=name,
            namespace=props.get("Namespace"),
            metric_name=props.get("MetricName"),
            metric_data_queries=None,
            comparison_operator=props.get("ComparisonOperator"),
            evaluation_periods=props.get("EvaluationPeriods"),
            datapoints_to_alarm=props.get("DatapointsToAlarm"),
            period=props.get("Period"),
            threshold=props.get("Threshold"),
            statistic=props.get("Statistic"),
            extended_statistic=None,
            description=props.get("AlarmDescription"),
            dimensions=props.get("Dimensions", []),
            alarm_actions=props.get("AlarmActions", []),
            ok_actions=props.get("OKActions", []),
            insufficient_data_actions=props.get("InsufficientDataActions", []),
            unit=props.get("Unit"),
            actions_enabled=props.get("ActionsEnabled", True),
            treat_missing_data=props.get("TreatMissingData"),
        )
        return cls(name)


class ApiGatewayStage(CloudFormationModel):
    """AWS::ApiGateway::Stage (moto skips it, and the REST API has no stage to serve without it)."""

    __module__ = "moto.apigateway.flowmend_emulator"

    def __init__(self, name):
        self.name = name

    @staticmethod
    def cloudformation_type():
        return "AWS::ApiGateway::Stage"

    @staticmethod
    def cloudformation_name_type():
        return "StageName"

    @property
    def physical_resource_id(self):
        return self.name

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        from moto.apigateway.models import apigateway_backends

        props = cloudformation_json["Properties"]
        name = props.get("StageName") or resource_name
        backend = apigateway_backends[account_id][region_name]
        api = backend.get_rest_api(props["RestApiId"])
        if name not in api.stages:
            backend.create_stage(
                function_id=props["RestApiId"],
                stage_name=name,
                deploymentId=props.get("DeploymentId"),
                variables=props.get("Variables"),
                description=props.get("Description", ""),
                tracing_enabled=props.get("TracingEnabled"),
            )
        return cls(name)




class SecretsManagerSecret(CloudFormationModel):
    """AWS::SecretsManager::Secret, with GenerateSecretString as CloudFormation fills it (the callback key of waiting runs)."""

    __module__ = "moto.secretsmanager.flowmend_emulator"

    def __init__(self, arn, name, account_id, region):
        self.arn = arn
        self.name = name
        self.account_id = account_id
        self.region = region

    @staticmethod
    def cloudformation_type():
        return "AWS::SecretsManager::Secret"

    @staticmethod
    def cloudformation_name_type():
        return "Name"

    @property
    def physical_resource_id(self):
        return self.arn

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        import secrets
        import string

        from moto.secretsmanager.models import secretsmanager_backends

        props = cloudformation_json["Properties"]
        name = props.get("Name") or resource_name
        value = props.get("SecretString")
        generate = props.get("GenerateSecretString")
        if value is None and generate is not None:
            alphabet = string.ascii_letters + string.digits + ("" if generate.get("ExcludePunctuation") else "!#$%&()*+,-.:;<=>?@[]^_{|}~")
            generated = "".join(secrets.choice(alphabet) for _ in range(int(generate.get("PasswordLength", 32))))
            key = generate.get("GenerateStringKey")
            if key:
                document = json.loads(generate.get("SecretStringTemplate") or "{}")
                document[key] = generated
                value = json.dumps(document)
            else:
                value = generated
        created = secretsmanager_backends[account_id][region_name].create_secret(
            name=name,
            secret_string=value,
            secret_binary=None,
            description=props.get("Description"),
            tags=props.get("Tags"),
            kms_key_id=props.get("KmsKeyId"),
            client_request_token=None,
            replica_regions=[],
            force_overwrite=False,
        )
        return cls(json.loads(created)["ARN"], name, account_id, region_name)


class _NamedWithArn:
    """A Scheduler resource CloudFormation names by its Name and whose one attribute is its Arn. A mixin, not a
    base class: moto finds models among CloudFormationModel's direct subclasses only."""

    def __init__(self, name, arn):
        self.name = name
        self.arn = arn

    @staticmethod
    def cloudformation_name_type():
        return "Name"

    @property
    def physical_resource_id(self):
        return self.name

    @classmethod
    def has_cfn_attr(cls, attr):
        return attr == "Arn"

    def get_cfn_attribute(self, attribute_name):
        return self.arn


class SchedulerScheduleGroup(_NamedWithArn, CloudFormationModel):
    """AWS::Scheduler::ScheduleGroup (the group of waiting runs' one-time wake-ups)."""

    __module__ = "moto.scheduler.flowmend_emulator"

    @staticmethod
    def cloudformation_type():
        return "AWS::Scheduler::ScheduleGroup"

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        from moto.scheduler.models import scheduler_backends

        props = cloudformation_json.get("Properties", {})
        name = props.get("Name") or resource_name
        group = scheduler_backends[account_id][region_name].create_schedule_group(name, props.get("Tags") or [])
        return cls(name, group.arn)


class SchedulerSchedule(_NamedWithArn, CloudFormationModel):
    """AWS::Scheduler::Schedule (a ScheduledWorkflow of a stack in the default Scheduler mode, as `flowmend init` writes it)."""

    __module__ = "moto.scheduler.flowmend_emulator"

    @staticmethod
    def cloudformation_type():
        return "AWS::Scheduler::Schedule"

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        from moto.scheduler.models import scheduler_backends

        props = cloudformation_json.get("Properties", {})
        name = props.get("Name") or resource_name
        schedule = scheduler_backends[account_id][region_name].create_schedule(
            description=props.get("Description"),
            end_date=props.get("EndDate"),
            flexible_time_window=props.get("FlexibleTimeWindow") or {"Mode": "OFF"},
            group_name=props.get("GroupName") or "default",
            kms_key_arn=props.get("KmsKeyArn"),
            name=name,
            schedule_expression=props["ScheduleExpression"],
            schedule_expression_timezone=props.get("ScheduleExpressionTimezone"),
            start_date=props.get("StartDate"),
            state=props.get("State") or "ENABLED",
            target=props["Target"],
            action_after_completion=props.get("ActionAfterCompletion"),
        )
        return cls(name, schedule.arn)
