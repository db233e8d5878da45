"""failures-are-watched: each way a failure could go unnoticed is caught, and the compliant
stack (what the blocks declare) passes."""

from __future__ import annotations

from typing import Any

from policies.testing import Spec
from tests.policies.pack_builders import (
    ALARM,
    ALERTS,
    PREFIX,
    QUEUE,
    arn,
    compliant_stack,
    depth_alarm,
    function,
    messages,
    queue_arn,
    regional_throttles,
    work_queue,
)
from tests.policies.pack_builders import run as run_pack

RULE = "failures-are-watched"
MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
REGION = ALERTS.split(":")[3]


def run(specs: list[Spec], policy: str, *, stack: str = "prod") -> Any:
    """The rule on a prod stack (a non-prod stack without any alarm is judged on its failure
    paths only: :func:`test_a_developer_stack_without_alarms_keeps_its_failure_paths`)."""
    return run_pack(specs, policy, stack=stack)
SCHEDULE = "aws:scheduler/schedule:Schedule"
INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"
BUCKET_NOTIFICATION = "aws:s3/bucketNotification:BucketNotification"
FN_ARN = arn("lambda", f"function:{PREFIX}-dm-block")


def _failures_queue(seed: str, *, alarms: bool = True) -> list[Spec]:
    name = f"{PREFIX}-{seed}"
    queue: Spec = (QUEUE, seed, {"name": name, "sqsManagedSseEnabled": True})
    return [queue, depth_alarm(name)] if alarms else [queue]


def _schedule(*, dlq: bool = True) -> Spec:
    target: dict[str, Any] = {"arn": FN_ARN, "roleArn": arn("iam", "role/x", region="")}
    if dlq:
        target["deadLetterConfig"] = {"arn": queue_arn(f"{PREFIX}-dm-block-weekly-schedule-dlq")}
    return (SCHEDULE, "dm-block-weekly", {"name": f"{PREFIX}-dm-block-weekly", "target": target})


def _invoke_config() -> Spec:
    return (
        INVOKE_CONFIG,
        "dm-block-async",
        {
            "functionName": f"{PREFIX}-dm-block",
            "destinationConfig": {
                "onFailure": {"destination": queue_arn(f"{PREFIX}-dm-block-failures")}
            },
        },
    )


def _scheduled_function(
    *, dlq: bool = True, destination: bool = True, alarms: bool = True
) -> list[Spec]:
    specs = [
        *function("dm-block", alarms=alarms),
        *_failures_queue("dm-block-failures", alarms=alarms),
        *_failures_queue("dm-block-weekly-schedule-dlq", alarms=alarms),
        _schedule(dlq=dlq),
    ]
    return specs + ([_invoke_config()] if destination else [])


def test_the_compliant_stack_and_a_watched_scheduled_function_pass() -> None:
    assert run(compliant_stack(), RULE) == []
    assert run(compliant_stack() + _scheduled_function(), RULE) == []


NO_ERRORS = (
    "has no Errors alarm, and not every way it is invoked keeps a final failure in a queue whose "
    "depth is alarmed"
)


def test_a_new_function_without_its_alarms_is_caught() -> None:
    found = run(compliant_stack() + function("ls-export", alarms=False), RULE)
    assert messages(found) == [
        f"function {PREFIX}-ls-export {NO_ERRORS}",
        f"region {REGION} has no Throttles alarm on AWS/Lambda without dimensions (or one per "
        "function): a throttled invocation there goes unheard",
    ]
    with_regional = compliant_stack() + function("ls-export", alarms=False) + [regional_throttles()]
    assert messages(run(with_regional, RULE)) == [f"function {PREFIX}-ls-export {NO_ERRORS}"]


def test_a_function_missing_its_throttles_is_caught_unless_the_region_is_watched() -> None:
    specs = [s for s in function("ls-report") if s[1] != f"{PREFIX}-ls-report-throttles"]
    assert messages(run(specs, RULE)) == [
        f"region {REGION} has no Throttles alarm on AWS/Lambda without dimensions (or one per "
        "function): a throttled invocation there goes unheard"
    ]
    assert run([*specs, regional_throttles()], RULE) == []


def _consumer(*, url: bool = False) -> list[Spec]:
    """rrs-sender fed by rrs-work (whose DLQ is alarmed), with no alarm of its own."""
    mapping = (
        MAPPING,
        "rrs-sender-work",
        {"functionName": f"{PREFIX}-rrs-sender", "eventSourceArn": queue_arn(f"{PREFIX}-rrs-work")},
    )
    return [
        *function("rrs-sender", alarms=False, url="AWS_IAM" if url else None),
        *work_queue("rrs-work"),
        mapping,
        regional_throttles(),
    ]


def test_a_function_whose_failures_land_in_a_watched_dlq_needs_no_errors_alarm() -> None:
    assert run(_consumer(), RULE) == []
    unwatched = [s for s in _consumer() if not (s[0] == ALARM and "dlq" in s[1])]
    assert f"function {PREFIX}-rrs-sender {NO_ERRORS}" in messages(run(unwatched, RULE))


def test_a_function_with_a_url_keeps_its_errors_alarm() -> None:
    assert messages(run(_consumer(url=True), RULE)) == [f"function {PREFIX}-rrs-sender {NO_ERRORS}"]


def test_an_alarm_that_notifies_nobody_is_caught() -> None:
    specs = [
        (t, n, {**p, "alarmActions": []}) if n == f"{PREFIX}-ls-report-errors" else (t, n, p)
        for t, n, p in function("ls-report")
    ]
    assert messages(run(specs, RULE)) == [
        f"alarm {PREFIX}-ls-report-errors has no alarm action naming an SNS topic: nobody hears it",
        f"function {PREFIX}-ls-report {NO_ERRORS}",
    ]


def test_a_developer_stack_without_alarms_keeps_its_failure_paths() -> None:
    bare = [*function("ls-report", alarms=False), *work_queue("rrs-work", alarms=False)]
    assert run(bare, RULE, stack="dev") == []  # alarms: none
    assert len(run(bare, RULE, stack="prod")) == 2  # prod always alarms
    # ...but the failure paths still hold without alarms
    found = run(_scheduled_function(dlq=False, destination=False, alarms=False), RULE, stack="dev")
    assert len(found) == 2 and all("dead-letter queue" in m or "on-failure" in m for m in messages(found))


def test_a_dead_letter_queue_without_its_depth_alarm_is_caught() -> None:
    found = run(work_queue("rrs-work", alarms=False), RULE)
    assert messages(found) == [
        f"dead-letter / failure queue {PREFIX}-rrs-work-dlq has no alarm on "
        "ApproximateNumberOfMessagesVisible > 0"
    ]


def test_a_depth_alarm_that_waits_for_several_messages_does_not_count() -> None:
    specs = [
        (t, n, {**p, "threshold": 5}) if t == ALARM else (t, n, p)
        for t, n, p in work_queue("rrs-work")
    ]
    assert len(run(specs, RULE)) == 1


def test_a_schedule_without_a_dead_letter_queue_is_caught() -> None:
    found = run(_scheduled_function(dlq=False), RULE)
    assert messages(found) == [
        f"schedule {PREFIX}-dm-block-weekly has no dead-letter queue (target.deadLetterConfig)"
    ]


def test_a_scheduled_function_without_an_on_failure_destination_is_caught() -> None:
    found = run(_scheduled_function(destination=False), RULE)
    assert messages(found) == [
        f"function {PREFIX}-dm-block is invoked asynchronously (schedule {PREFIX}-dm-block-weekly) "
        "but has no on-failure destination (FunctionEventInvokeConfig destinationConfig.onFailure)"
    ]


def test_a_function_fed_by_s3_without_a_destination_is_caught() -> None:
    notification = (
        BUCKET_NOTIFICATION,
        "raw-notification",
        {"bucket": "dev-ler-raw", "lambdaFunctions": [{"lambdaFunctionArn": FN_ARN}]},
    )
    found = run([*function("dm-block"), notification], RULE)
    assert len(found) == 1 and "S3 notifications of dev-ler-raw" in found[0].message
    assert (
        run(
            [
                *function("dm-block"),
                notification,
                _invoke_config(),
                *_failures_queue("dm-block-failures"),
            ],
            RULE,
        )
        == []
    )


def test_the_alert_topic_is_an_sns_arn() -> None:
    assert ALERTS.split(":")[2] == "sns"


def test_a_dead_letter_queue_named_only_at_run_time_is_declared_by_its_tag() -> None:
    """rrs-request-schedules-dlq: only the schedules rrs-webhook creates name it."""
    specs = _failures_queue("rrs-request-schedules-dlq")
    found = run(specs, "queue-hygiene")
    assert any("is no one's dead-letter target" in m for m in messages(found))
    tagged = [
        (t, n, {**p, "tags": {"crm:dead-letter-of": "schedules of group dev-rrs-requests"}})
        if t == QUEUE
        else (t, n, p)
        for t, n, p in specs
    ]
    assert not any("dead-letter target" in m for m in messages(run(tagged, "queue-hygiene")))
    # ...and once it is a dead-letter target, it must be watched like any other
    unwatched = [s for s in tagged if s[0] != ALARM]
    assert messages(run(unwatched, RULE)) == [
        f"dead-letter / failure queue {PREFIX}-rrs-request-schedules-dlq has no alarm on "
        "ApproximateNumberOfMessagesVisible > 0"
    ]
