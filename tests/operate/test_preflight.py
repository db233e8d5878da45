"""`make preflight`: each check against botocore's Stubber, which validates every stubbed answer
against the service model (the API reference's response shape), for the ok and the failing
account. Response bodies follow the API reference pages named in components/operate/preflight.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from components.operate import preflight as pf
from components.stack import POWERTOOLS_PARAMETER
from testsupport.graphs import GraphCache

HAIKU = "global.anthropic.claude-haiku-4-5-20251001-v1:0"


class Stubs:
    """One stubbed client per (service, region); every queued answer must be consumed."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, str], tuple[Any, Stubber]] = {}

    def __call__(self, service: str, region: str) -> Any:
        return self.stub(service, region)[0]

    def stub(self, service: str, region: str) -> tuple[Any, Stubber]:
        if (service, region) not in self.made:
            client = boto3.client(service, region_name=region)  # type: ignore[call-overload]
            stubber = Stubber(client)
            stubber.activate()
            self.made[service, region] = (client, stubber)
        return self.made[service, region]

    def answer(self, service: str, region: str, op: str, body: dict[str, Any], params: dict[str, Any] | None = None) -> None:
        self.stub(service, region)[1].add_response(op, body, params)

    def refuse(self, service: str, region: str, op: str, code: str, status: int = 400) -> None:
        self.stub(service, region)[1].add_client_error(op, code, http_status_code=status)

    def done(self) -> None:
        for _, stubber in self.made.values():
            stubber.assert_no_pending_responses()


@pytest.fixture
def stubs(aws: None) -> Iterator[Stubs]:
    made = Stubs()
    yield made
    made.done()


def _availability(**changes: Any) -> dict[str, Any]:
    body = {
        "modelId": "anthropic.claude-haiku-4-5-20251001-v1:0",
        "agreementAvailability": {"status": "AVAILABLE"},
        "authorizationStatus": "AUTHORIZED",
        "entitlementAvailability": "AVAILABLE",
        "regionAvailability": "AVAILABLE",
    }
    body.update(changes)
    return body


def _profile(status: str = "ACTIVE") -> dict[str, Any]:
    return {
        "inferenceProfileName": "Global Claude Haiku 4.5",
        "inferenceProfileArn": f"arn:aws:bedrock:eu-west-2:123456789012:inference-profile/{HAIKU}",
        "models": [{"modelArn": "arn:aws:bedrock:eu-west-2::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0"}],
        "inferenceProfileId": HAIKU,
        "status": status,
        "type": "SYSTEM_DEFINED",
    }


def test_bedrock_model_granted(stubs: Stubs) -> None:
    stubs.answer("bedrock", "eu-west-2", "get_foundation_model_availability", _availability(),
                 {"modelId": "anthropic.claude-haiku-4-5-20251001-v1:0"})
    stubs.answer("bedrock", "eu-west-2", "get_inference_profile", _profile(),
                 {"inferenceProfileIdentifier": HAIKU})
    assert pf.bedrock_model(stubs, "eu-west-2", HAIKU).status == "ok"


def test_bedrock_model_without_the_marketplace_agreement_and_use_case_form(stubs: Stubs) -> None:
    stubs.answer("bedrock", "eu-west-2", "get_foundation_model_availability", _availability(
        agreementAvailability={"status": "NOT_AVAILABLE"}, authorizationStatus="NOT_AUTHORIZED"))
    stubs.answer("bedrock", "eu-west-2", "get_inference_profile", _profile())
    found = pf.bedrock_model(stubs, "eu-west-2", HAIKU)
    assert found.status == "FAIL"
    assert "Marketplace agreement NOT_AVAILABLE" in found.detail and "authorization NOT_AUTHORIZED" in found.detail
    assert "use-case form" in found.fix and found.page == pf.MODEL_ACCESS_PAGE


def test_bedrock_unknown_model(stubs: Stubs) -> None:
    stubs.refuse("bedrock", "eu-west-2", "get_foundation_model_availability", "ResourceNotFoundException", 404)
    assert pf.bedrock_model(stubs, "eu-west-2", HAIKU).status == "FAIL"


def test_ses_account_sandbox_is_a_warning_production_is_ok(stubs: Stubs) -> None:
    quota = {"Max24HourSend": 200.0, "MaxSendRate": 1.0, "SentLast24Hours": 0.0}
    stubs.answer("sesv2", "eu-west-2", "get_account", {
        "ProductionAccessEnabled": False, "SendingEnabled": True, "EnforcementStatus": "HEALTHY", "SendQuota": quota,
        "DedicatedIpAutoWarmupEnabled": False})
    stubs.answer("sesv2", "eu-west-2", "get_account", {
        "ProductionAccessEnabled": True, "SendingEnabled": True, "EnforcementStatus": "HEALTHY",
        "SendQuota": {**quota, "Max24HourSend": 50000.0}, "DedicatedIpAutoWarmupEnabled": False})
    sandbox = pf.ses_account(stubs, "eu-west-2")
    assert sandbox.status == "warn" and "production access" in sandbox.fix
    assert pf.ses_account(stubs, "eu-west-2").status == "ok"


def test_ses_identity_states(stubs: Stubs) -> None:
    verified = {"IdentityType": "DOMAIN", "FeedbackForwardingStatus": True, "VerifiedForSendingStatus": True,
                "DkimAttributes": {"SigningEnabled": True, "Status": "SUCCESS", "Tokens": ["a", "b", "c"]}}
    pending = {**verified, "VerifiedForSendingStatus": False,
               "DkimAttributes": {"SigningEnabled": True, "Status": "PENDING", "Tokens": ["a", "b", "c"]}}
    stubs.answer("sesv2", "eu-west-2", "get_email_identity", verified, {"EmailIdentity": "example.com"})
    stubs.answer("sesv2", "eu-west-2", "get_email_identity", pending)
    stubs.refuse("sesv2", "eu-west-2", "get_email_identity", "NotFoundException", 404)
    stubs.refuse("sesv2", "eu-west-2", "get_email_identity", "NotFoundException", 404)
    assert pf.ses_identity(stubs, "eu-west-2", "example.com", owner=False).status == "ok"
    assert "DKIM PENDING" in pf.ses_identity(stubs, "eu-west-2", "example.com", owner=False).detail
    assert pf.ses_identity(stubs, "eu-west-2", "example.com", owner=True).status == "warn"
    assert "mailIdentityOwner" in pf.ses_identity(stubs, "eu-west-2", "example.com", owner=False).fix


def test_lambda_concurrency_of_a_new_account(stubs: Stubs) -> None:
    usage = {"TotalCodeSize": 0, "FunctionCount": 0}
    stubs.answer("lambda", "us-east-1", "get_account_settings", {
        "AccountLimit": {"TotalCodeSize": 80530636800, "CodeSizeUnzipped": 262144000, "CodeSizeZipped": 52428800,
                         "ConcurrentExecutions": 10, "UnreservedConcurrentExecutions": 10}, "AccountUsage": usage})
    stubs.answer("lambda", "us-east-1", "get_account_settings", {
        "AccountLimit": {"ConcurrentExecutions": 1000, "UnreservedConcurrentExecutions": 1000}, "AccountUsage": usage})
    low = pf.lambda_concurrency(stubs, "us-east-1", 16)
    assert low.status == "FAIL" and "10 unreserved" in low.detail and "Service Quotas" in low.fix
    assert pf.lambda_concurrency(stubs, "us-east-1", 16).status == "ok"


def test_public_concurrency_on_a_young_a_shared_and_a_roomy_account(stubs: Stubs) -> None:
    usage = {"TotalCodeSize": 0, "FunctionCount": 0}
    for total, free in ((10, 10), (1000, 150), (1000, 1000)):
        stubs.answer("lambda", "us-east-1", "get_account_settings", {
            "AccountLimit": {"ConcurrentExecutions": total, "UnreservedConcurrentExecutions": free},
            "AccountUsage": usage})
    young = pf.public_concurrency(stubs, "us-east-1", reserved=70, functions=7)
    assert young.status == "FAIL" and "quota is 10 concurrent executions" in young.detail
    assert "publicConcurrency: null" in young.fix and "uncappedPublicFunctions" in young.fix
    shared = pf.public_concurrency(stubs, "us-east-1", reserved=70, functions=7)
    assert shared.status == "warn" and "150 of 1000 unreserved" in shared.detail
    roomy = pf.public_concurrency(stubs, "us-east-1", reserved=70, functions=7)
    assert roomy.status == "ok" and "reserves 70 for 7 public functions" in roomy.detail


def test_the_prod_plan_reserves_for_every_public_surface(graphs: GraphCache) -> None:
    prod = graphs.run("prod")
    found = pf.public_reservations(prod)
    assert sum(n for _, n in found.values()) == 8  # the seven public URLs, and upsr-compliance
    assert all(reserved == 10 * n for reserved, n in found.values())  # publicConcurrency: 10
    names = [c.func.__name__ for c in pf.plan(prod)]  # type: ignore[attr-defined]
    assert names.count("public_concurrency") == len(found)


def test_sms_identity_pool_phone_and_missing(stubs: Stubs) -> None:
    pool = {"PoolArn": "arn:aws:sms-voice:eu-west-2:123456789012:pool/pool-1", "PoolId": "pool-1",
            "Status": "ACTIVE", "MessageType": "TRANSACTIONAL", "TwoWayEnabled": False,
            "SelfManagedOptOutsEnabled": False, "OptOutListName": "Default", "SharedRoutesEnabled": False,
            "DeletionProtectionEnabled": False, "CreatedTimestamp": "2026-01-01T00:00:00Z"}
    stubs.answer("pinpoint-sms-voice-v2", "eu-west-2", "describe_pools", {"Pools": [pool]}, {"PoolIds": ["pool-1"]})
    stubs.answer("pinpoint-sms-voice-v2", "eu-west-2", "describe_pools", {"Pools": [{**pool, "Status": "CREATING"}]})
    stubs.refuse("pinpoint-sms-voice-v2", "eu-west-2", "describe_phone_numbers", "ResourceNotFoundException", 404)
    active = pf.sms_identity(stubs, "eu-west-2", "pool/pool-1")
    assert active.status == "ok" and "alphanumeric sender ID shows the business's name" in active.detail
    assert active.page == pf.SENDER_ID_PAGE  # issue 40: preflight says how to register one
    assert pf.sms_identity(stubs, "eu-west-2", "pool/pool-1").detail == "status CREATING"
    missing = pf.sms_identity(stubs, "eu-west-2", "phone-number/phone-9")
    assert missing.status == "FAIL" and "smsOriginationIdentity" in missing.fix


def _spend_limits(max_usd: int, enforced: int, overridden: bool) -> dict[str, Any]:
    return {"SpendLimits": [
        {"Name": "VOICE_MESSAGE_MONTHLY_SPEND_LIMIT", "EnforcedLimit": 1, "MaxLimit": 1000, "Overridden": False},
        {"Name": "TEXT_MESSAGE_MONTHLY_SPEND_LIMIT", "EnforcedLimit": enforced, "MaxLimit": max_usd,
         "Overridden": overridden},
    ]}


def test_sms_spend_limit_below_near_and_above_the_expected_month(stubs: Stubs) -> None:
    """DescribeSpendLimits (https://docs.aws.amazon.com/goto/WebAPI/pinpoint-sms-voice-v2-2022-03-31/DescribeSpendLimits):
    a new account's small limit fails, an enforced limit overrides the account's, and a limit
    with less than twice the expected month is a warning."""
    sms = "pinpoint-sms-voice-v2"
    stubs.answer(sms, "eu-west-2", "describe_spend_limits", _spend_limits(1, 1, False))
    stubs.answer(sms, "eu-west-2", "describe_spend_limits", _spend_limits(1000, 150, True))
    stubs.answer(sms, "eu-west-2", "describe_spend_limits", _spend_limits(1000, 150, False))
    stubs.refuse(sms, "eu-west-2", "describe_spend_limits", "AccessDeniedException", 403)
    young = pf.sms_spend_limit(stubs, "eu-west-2", 107.18)
    assert young.status == "FAIL" and "account limit $1 a month" in young.detail
    assert "$107.18" in young.detail and "at least $214" in young.fix
    assert young.page == pf.SPEND_LIMIT_PAGE
    tight = pf.sms_spend_limit(stubs, "eu-west-2", 107.18)
    assert tight.status == "warn" and "enforced limit $150" in tight.detail
    assert pf.sms_spend_limit(stubs, "eu-west-2", 107.18).status == "ok"
    denied = pf.sms_spend_limit(stubs, "eu-west-2", 107.18)
    assert denied.status == "FAIL" and "sms-voice:DescribeSpendLimits" in denied.fix


def test_the_expected_sms_spend_is_make_costs_sms_lines(graphs: GraphCache) -> None:
    from components.offline import cost

    prod = graphs.run("prod")
    busy = cost.graph_cost(prod, cost.load_usage(), cost.load_prices()).busy
    expected = pf.expected_sms_usd(prod)
    assert list(expected) == ["eu-west-2"]  # upsr and rrs send from eu-west-2
    assert expected["eu-west-2"] == pytest.approx(cost.sms_usd(busy)) and expected["eu-west-2"] > 50


def test_receipt_rule_set_one_active_per_region(stubs: Stubs) -> None:
    other = {"Metadata": {"Name": "prod-ler-inbound", "CreatedTimestamp": "2026-01-01T00:00:00Z"}, "Rules": []}
    stubs.answer("ses", "eu-west-2", "describe_active_receipt_rule_set", other)
    stubs.answer("ses", "eu-west-2", "describe_active_receipt_rule_set", other)
    stubs.answer("ses", "eu-west-2", "describe_active_receipt_rule_set", {})
    assert pf.receipt_rule_set(stubs, "eu-west-2", "dev-ler-inbound", activate=False).status == "ok"
    replaced = pf.receipt_rule_set(stubs, "eu-west-2", "dev-ler-inbound", activate=True)
    assert replaced.status == "warn" and "in place of prod-ler-inbound" in replaced.detail
    assert "receives no mail" in pf.receipt_rule_set(stubs, "eu-west-2", "dev-ler-inbound", activate=False).detail


def test_powertools_parameter_published_missing_or_pinned(stubs: Stubs) -> None:
    value = "arn:aws:lambda:eu-west-2:017000801446:layer:AWSLambdaPowertoolsPythonV3-python314-arm64:27"
    stubs.answer("ssm", "eu-west-2", "get_parameter", {"Parameter": {
        "Name": POWERTOOLS_PARAMETER, "Type": "String", "Value": value, "Version": 27}},
        {"Name": POWERTOOLS_PARAMETER})
    stubs.refuse("ssm", "ap-east-2", "get_parameter", "ParameterNotFound")
    assert pf.powertools_layer(stubs, "eu-west-2", None).detail.endswith("version 27")
    assert pf.powertools_layer(stubs, "ap-east-2", None).status == "FAIL"
    assert pf.powertools_layer(stubs, "ap-east-2", value).status == "ok"


def test_a_denied_call_names_the_action(stubs: Stubs) -> None:
    stubs.refuse("lambda", "us-east-1", "get_account_settings", "AccessDeniedException", 403)
    found = pf.lambda_concurrency(stubs, "us-east-1", 1)
    assert found.status == "FAIL" and "lambda:GetAccountSettings" in found.fix


def test_the_dev_plan_checks_every_model_region_domain_and_identity(graphs: GraphCache) -> None:
    graph = graphs.run("dev")
    checks = pf.plan(graph)
    calls = [(c.func.__name__, tuple(sorted(c.keywords.items()))) for c in checks]  # type: ignore[attr-defined]
    names = [name for name, _ in calls]
    assert names.count("bedrock_model") == 1  # one model id, in eu-west-2 (dm and ls have none)
    assert dict(calls[0][1])["region"] == "eu-west-2"
    assert names.count("ses_account") == 2 and names.count("ses_identity") == 2
    assert names.count("lambda_concurrency") == 2 and names.count("powertools_layer") == 2
    assert names.count("sms_identity") == 1 and names.count("receipt_rule_set") == 1
    assert names.count("sms_spend_limit") == 1
    assert names[-1] == "dm_capacity"
    need = pf.concurrency_need(graph)
    assert need["us-east-1"] == 10 + 2 + 5 + 5  # dm-score, dm-merge, dm-stage caps, five others


def test_dm_capacity_says_before_the_run_whether_the_portal_fits() -> None:
    unknown = pf.dm_capacity(lambda service, region: None, None)
    assert unknown.status == "warn" and "systems.dm.portalContacts" in unknown.fix
    fits = pf.dm_capacity(lambda service, region: None, 1_000_000)
    assert fits.status == "ok" and "10,000 HubSpot list calls" in fits.detail
    split = pf.dm_capacity(lambda service, region: None, 2_000_000)  # above splitAbove: split
    assert split.status == "ok" and "blocking split" in split.detail and "400 partitions" in split.detail
    fails = pf.dm_capacity(lambda service, region: None, 2_000_000, split_above=2_000_000)
    assert fails.status == "FAIL" and "does NOT fit" in fails.detail and fails.page
    assert "splitAbove" in fails.fix
    too_long = pf.dm_capacity(lambda service, region: None, 10_000_000)  # a read of 93 invocations
    assert too_long.status == "FAIL" and "blocking split" in too_long.detail


def test_main_prints_each_failure_with_its_fix_and_page(
    graphs: GraphCache, stubs: Stubs, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from components.offline import engine

    dev = graphs.run("dev")  # built before run is replaced: the cache builds through it
    monkeypatch.setattr(engine, "run", lambda stack, overrides=None: dev)
    for check in pf.plan(graphs.run("dev")):
        if check.func is pf.dm_capacity:  # type: ignore[attr-defined]
            continue  # no AWS call: the portal size from the config
        region = check.keywords["region"]  # type: ignore[attr-defined]
        service = {"bedrock_model": "bedrock", "ses_account": "sesv2", "ses_identity": "sesv2",
                   "lambda_concurrency": "lambda", "public_concurrency": "lambda",
                   "sms_identity": "pinpoint-sms-voice-v2", "sms_spend_limit": "pinpoint-sms-voice-v2",
                   "receipt_rule_set": "ses", "powertools_layer": "ssm"}[check.func.__name__]  # type: ignore[attr-defined]
        op = {"bedrock": "get_foundation_model_availability", "sesv2": "get_account" if check.func.__name__ == "ses_account" else "get_email_identity",  # type: ignore[attr-defined]
              "lambda": "get_account_settings", "pinpoint-sms-voice-v2": "describe_pools",
              "ses": "describe_active_receipt_rule_set", "ssm": "get_parameter"}[service]
        if check.func.__name__ == "sms_spend_limit":  # type: ignore[attr-defined]
            op = "describe_spend_limits"
        stubs.refuse(service, region, op, "AccessDeniedException", 403)
    assert pf.main(["--stack", "dev"], clients=stubs) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL") == 14 and out.count("fix: ") == 15  # 2 public-concurrency regions; dm warns
    assert "preflight dev: 15 checks, 14 failed, 1 warnings" in out  # dm: no portal size given


def test_an_error_before_aws_answers_is_one_line_per_check_not_a_traceback(
    graphs: GraphCache, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Credentials that fail once the checks run (an expired login, no network)."""
    from botocore.exceptions import NoCredentialsError

    from components.offline import engine

    dev = graphs.run("dev")  # built before run is replaced: the cache builds through it
    monkeypatch.setattr(engine, "run", lambda stack, overrides=None: dev)

    class Nobody:
        def __getattr__(self, name: str) -> Any:
            def call(**_: Any) -> Any:
                raise NoCredentialsError()

            return call

    assert pf.main(["--stack", "dev"], clients=lambda service, region: Nobody()) == 1
    out = capsys.readouterr().out
    assert out.count("NoCredentialsError") == 14 and "aws configure" in out


@pytest.mark.parametrize("command", ["preflight", "secrets", "verify"])
def test_without_credentials_a_command_says_so_once_not_a_traceback(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line naming the fix, before the plan is even built (not the same error per check,
    region or system)."""
    import io
    import os

    from components.offline import engine
    from components.operate import stack_secrets, verify

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(engine, "run", lambda stack, overrides=None: pytest.fail("planned without credentials"))
    main: dict[str, Callable[[list[str]], int]] = {
        "preflight": pf.main, "verify": verify.main,
        "secrets": lambda argv: stack_secrets.main(argv, stdin=io.StringIO("")),
    }
    assert main[command](["--stack", "dev"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"make {command}: no AWS credentials") and "aws configure" in captured.err
