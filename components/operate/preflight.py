"""``make preflight STACK=<stack>``: the account facts the plan cannot know, before `pulumi up`.

Read-only calls with the deployer's credentials, per region the stack uses. Each finding is ok,
warn (works, with a limit to know) or FAIL (the stack would run broken), and every one that is
not ok names the AWS page and the fix:

- Bedrock: each configured model is usable in its system's region. A fresh account is refused
  Anthropic models until it has subscribed through AWS Marketplace and submitted Anthropic's
  one-time use-case form; GetFoundationModelAvailability reports exactly those facts
  (agreement, authorization, entitlement, region); GetInferenceProfile that the cross-Region
  profile is active.
- SES: production access (sesv2 GetAccount; in the sandbox only verified recipients receive
  mail) and each sender domain's identity (sesv2 GetEmailIdentity: verified, DKIM).
- Lambda: the account's concurrency quota against what the stack's queue consumers may use at
  once (GetAccountSettings; new accounts can start at 10).
- Lambda: whether the account can reserve the public surfaces' concurrency caps
  (``publicConcurrency``) and still keep the 100 unreserved AWS requires (GetAccountSettings);
  on a young account (quota 10) it cannot, and says what the stack does instead.
- SMS: the End User Messaging SMS origination identity exists and is active.
- SMS: the account's monthly SMS spending limit in each SMS region (DescribeSpendLimits: the
  enforced limit if set, else the account limit) against the stack's expected monthly SMS
  spend there (``make cost``'s SMS lines at the planned volumes): sends stop for the rest of
  the month once the limit is spent, and a new account starts with a small one.
- SES receiving: which receipt rule set is active (ses DescribeActiveReceiptRuleSet): an account
  has one per region.
- Powertools: the public layer parameter exists in each region (or the stack pins the layer).
- dm: what the weekly run does at the portal's size (``systems.dm.portalContacts``): HubSpot
  calls, hours, invocations, and a failure when it would not fit, before it runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from components.config import DmSettings, ModelChoice, StackConfig
from components.offline import cost
from components.offline.engine import Graph
from components.operate import CREDENTIALS_PAGE, no_credentials, plan_graph, stack_command
from components.stack import POWERTOOLS_PARAMETER
from handlers.common.model_call import foundation_model
from handlers.duplicate_merger import capacity
from handlers.duplicate_merger.contract import FULL_READ_EVERY_WEEKS

Status = Literal["ok", "warn", "FAIL"]
Clients = Callable[[str, str], Any]
"""(service, region) -> a boto3 client."""

MODEL_ACCESS_PAGE = "https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html"
SES_PRODUCTION_PAGE = "https://docs.aws.amazon.com/ses/latest/dg/request-production-access.html"
SES_IDENTITY_PAGE = "https://docs.aws.amazon.com/ses/latest/dg/creating-identities.html"
LAMBDA_CONCURRENCY_PAGE = "https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html"
SMS_PAGE = "https://docs.aws.amazon.com/sms-voice/latest/userguide/phone-numbers-request.html"
SENDER_ID_PAGE = "https://docs.aws.amazon.com/sms-voice/latest/userguide/sender-id-request.html"
SENDER_ID_HINT = (
    "customers see a number: where the country supports one (the UK does), an alphanumeric sender "
    "ID shows the business's name instead; request it (End User Messaging, Configurations, Sender "
    "ID, Request originator), add it to the pool and keep smsOriginationIdentity on the pool "
    "(docs/systems/upsr.md#who-the-customer-hears-from)"
)
"""Said on an active pool or phone number: "Sender IDs in AWS End User Messaging SMS" (no
charge; not supported in the US or Canada) and "Request a sender ID" (the console steps)."""
SPEND_LIMITS_API = "https://docs.aws.amazon.com/goto/WebAPI/pinpoint-sms-voice-v2-2022-03-31/DescribeSpendLimits"
SPEND_LIMIT_PAGE = "https://docs.aws.amazon.com/sms-voice/latest/userguide/spend-limit.html"
SMS_HEADROOM = 2.0
"""A limit under this many times the expected month is a warning: a busy month stops sends."""
RULE_SET_PAGE = "https://docs.aws.amazon.com/ses/latest/dg/receiving-email-managing-receipt-rule-sets.html"
POWERTOOLS_PAGE = "https://docs.powertools.aws.dev/lambda/python/latest/#lambda-layer"
DM_CAPACITY_PAGE = "docs/systems/dm.md#large-portals"


@dataclass(frozen=True)
class Finding:
    """One checked fact."""

    check: str
    where: str
    status: Status
    detail: str
    fix: str = ""
    page: str = ""


def _error_code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def _denied(check: str, where: str, err: ClientError, action: str, page: str) -> Finding:
    return Finding(
        check, where, "FAIL", f"{_error_code(err)} on {action}",
        f"run preflight with credentials that may call {action}", page,
    )


def bedrock_model(clients: Clients, region: str, model_id: str) -> Finding:
    """GetFoundationModelAvailability (and GetInferenceProfile for a profile id)."""
    client = clients("bedrock", region)
    where = f"{region} {model_id}"
    base = foundation_model(model_id)
    try:
        got = client.get_foundation_model_availability(modelId=base)
        if base != model_id:
            profile = client.get_inference_profile(inferenceProfileIdentifier=model_id)
        else:
            profile = {"status": "ACTIVE"}
    except ClientError as err:
        if _error_code(err) == "ResourceNotFoundException":
            return Finding(
                "bedrock", where, "FAIL", "no such model or inference profile in this region",
                "choose a model id the region offers (Bedrock console, Model catalog)",
                MODEL_ACCESS_PAGE,
            )
        return _denied("bedrock", where, err, "bedrock:GetFoundationModelAvailability", MODEL_ACCESS_PAGE)
    wrong = []
    agreement = (got.get("agreementAvailability") or {}).get("status")
    if agreement != "AVAILABLE":
        wrong.append(f"Marketplace agreement {agreement}")
    if got.get("authorizationStatus") != "AUTHORIZED":
        wrong.append(f"authorization {got.get('authorizationStatus')}")
    if got.get("entitlementAvailability") != "AVAILABLE":
        wrong.append(f"entitlement {got.get('entitlementAvailability')}")
    if got.get("regionAvailability") != "AVAILABLE":
        wrong.append(f"region {got.get('regionAvailability')}")
    if profile.get("status") != "ACTIVE":
        wrong.append(f"inference profile {profile.get('status')}")
    if not wrong:
        return Finding("bedrock", where, "ok", "model access granted")
    return Finding(
        "bedrock", where, "FAIL", ", ".join(wrong) + " (calls are refused: AccessDeniedException)",
        "Bedrock console, Model catalog: open the model, request access (subscribes through AWS "
        "Marketplace) and, for Anthropic, submit the one-time use-case form; wait for AUTHORIZED",
        MODEL_ACCESS_PAGE,
    )


def ses_account(clients: Clients, region: str) -> Finding:
    """sesv2 GetAccount: production access and sending enabled."""
    try:
        got = clients("sesv2", region).get_account()
    except ClientError as err:
        return _denied("ses-account", region, err, "ses:GetAccount", SES_PRODUCTION_PAGE)
    if not got.get("SendingEnabled", False):
        return Finding(
            "ses-account", region, "FAIL", f"sending is disabled ({got.get('EnforcementStatus')})",
            "read the SES account dashboard's notice and resolve it with AWS", SES_PRODUCTION_PAGE,
        )
    if not got.get("ProductionAccessEnabled", False):
        return Finding(
            "ses-account", region, "warn", "SES sandbox: mail reaches verified addresses only",
            "request production access (SES console, Get set up, Request production access)",
            SES_PRODUCTION_PAGE,
        )
    quota = got.get("SendQuota") or {}
    return Finding("ses-account", region, "ok", f"production access, {quota.get('Max24HourSend', 0):g} mails a day")


def ses_identity(clients: Clients, region: str, domain: str, owner: bool) -> Finding:
    """sesv2 GetEmailIdentity of a sender domain: verified for sending, DKIM signing."""
    where = f"{region} {domain}"
    try:
        got = clients("sesv2", region).get_email_identity(EmailIdentity=domain)
    except ClientError as err:
        if _error_code(err) == "NotFoundException":
            if owner:
                return Finding(
                    "ses-identity", where, "warn", "not yet created (this stack declares it)",
                    "after `pulumi up`, publish the DKIM CNAMEs the stack outputs", SES_IDENTITY_PAGE,
                )
            return Finding(
                "ses-identity", where, "FAIL", "absent, and this stack does not declare it",
                "deploy the stack with mailIdentityOwner: true (prod) first", SES_IDENTITY_PAGE,
            )
        return _denied("ses-identity", where, err, "ses:GetEmailIdentity", SES_IDENTITY_PAGE)
    dkim = (got.get("DkimAttributes") or {}).get("Status")
    if got.get("VerifiedForSendingStatus") and dkim == "SUCCESS":
        return Finding("ses-identity", where, "ok", "verified, DKIM SUCCESS")
    return Finding(
        "ses-identity", where, "FAIL", f"not verified for sending (DKIM {dkim})",
        "publish the identity's three DKIM CNAME records in the domain's DNS", SES_IDENTITY_PAGE,
    )


def lambda_concurrency(clients: Clients, region: str, need: int) -> Finding:
    """GetAccountSettings: unreserved concurrency against what the stack may use at once."""
    try:
        got = clients("lambda", region).get_account_settings()
    except ClientError as err:
        return _denied("lambda-concurrency", region, err, "lambda:GetAccountSettings", LAMBDA_CONCURRENCY_PAGE)
    limit = got.get("AccountLimit") or {}
    free = int(limit.get("UnreservedConcurrentExecutions", 0))
    total = int(limit.get("ConcurrentExecutions", 0))
    if free >= need:
        return Finding("lambda-concurrency", region, "ok", f"{free} of {total} unreserved, stack needs {need}")
    return Finding(
        "lambda-concurrency", region, "FAIL",
        f"{free} unreserved concurrent executions, the stack's consumers may use {need} at once",
        "Service Quotas console, AWS Lambda, Concurrent executions: request an increase (1000 is "
        "the usual default)", LAMBDA_CONCURRENCY_PAGE,
    )


MIN_UNRESERVED = 100
"""What Lambda keeps unreserved per account and region: PutFunctionConcurrency refuses a
reservation that leaves less (API Reference, "PutFunctionConcurrency":
https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html)."""
RESERVED_PAGE = "https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html"


def public_concurrency(clients: Clients, region: str, reserved: int, functions: int) -> Finding:
    """GetAccountSettings: can ``functions`` public surfaces reserve ``reserved`` in all?"""
    try:
        got = clients("lambda", region).get_account_settings()
    except ClientError as err:
        return _denied("public-concurrency", region, err, "lambda:GetAccountSettings", RESERVED_PAGE)
    limit = got.get("AccountLimit") or {}
    total = int(limit.get("ConcurrentExecutions", 0))
    free = int(limit.get("UnreservedConcurrentExecutions", 0))
    if reserved == 0:
        return Finding(
            "public-concurrency", region, "warn",
            f"{functions} public Function URL functions reserve nothing (publicConcurrency: "
            f"null): each is bounded only by the account's {total} concurrent executions",
            "set publicConcurrency once the account's quota allows it", RESERVED_PAGE,
        )
    if total - reserved < MIN_UNRESERVED:
        return Finding(
            "public-concurrency", region, "FAIL",
            f"the account's quota is {total} concurrent executions: reserving {reserved} for "
            f"{functions} public functions would leave fewer than the {MIN_UNRESERVED} Lambda "
            "keeps unreserved, so `pulumi up` fails on PutFunctionConcurrency",
            "request a higher 'Concurrent executions' quota (Service Quotas, AWS Lambda), or set "
            "publicConcurrency: null and list the public functions in the policy pack's "
            "uncappedPublicFunctions: the surfaces are then bounded by the account's quota "
            f"({total}), shared with every other function",
            RESERVED_PAGE,
        )
    if free - reserved < MIN_UNRESERVED:
        return Finding(
            "public-concurrency", region, "warn",
            f"{free} of {total} unreserved: other reservations in the account leave too little "
            f"for {reserved} more, unless this stack's are among them already (a redeploy)",
            "release other functions' reserved concurrency or raise the quota", RESERVED_PAGE,
        )
    return Finding(
        "public-concurrency", region, "ok",
        f"reserves {reserved} for {functions} public functions; {free} of {total} unreserved now",
    )


def public_reservations(graph: Graph) -> dict[str, tuple[int, int]]:
    """Per region: (reserved concurrency in all, functions) of the public (auth NONE) URLs."""
    found: dict[str, tuple[int, int]] = {}
    for url in graph.of_type("aws:lambda/functionUrl:FunctionUrl"):
        if url.inputs.get("authorizationType") == "AWS_IAM":
            continue
        function = graph.named("aws:lambda/function:Function", str(url.inputs["functionName"]))
        region = str(function.outputs["arn"]).split(":")[3]
        cap = int(function.inputs.get("reservedConcurrentExecutions") or 0)
        reserved, count = found.get(region, (0, 0))
        found[region] = (reserved + max(cap, 0), count + 1)
    return found


def sms_identity(clients: Clients, region: str, identity: str) -> Finding:
    """End User Messaging SMS: the pool, phone number or sender id exists and is active."""
    where = f"{region} {identity}"
    kind, _, rest = identity.partition("/")
    client = clients("pinpoint-sms-voice-v2", region)
    try:
        if kind == "pool":
            status = client.describe_pools(PoolIds=[rest])["Pools"][0]["Status"]
        elif kind == "phone-number":
            status = client.describe_phone_numbers(PhoneNumberIds=[rest])["PhoneNumbers"][0]["Status"]
        else:
            sender, _, country = rest.partition("/")
            client.describe_sender_ids(SenderIds=[{"SenderId": sender, "IsoCountryCode": country}])
            status = "ACTIVE"
    except ClientError as err:
        if _error_code(err) == "ResourceNotFoundException":
            return Finding(
                "sms-identity", where, "FAIL", "no such origination identity in this region",
                "register a phone number or sender id (and a pool) in End User Messaging SMS, then "
                "set smsOriginationIdentity", SMS_PAGE,
            )
        return _denied("sms-identity", where, err, "sms-voice:Describe*", SMS_PAGE)
    if status == "ACTIVE":
        if kind in ("pool", "phone-number"):
            return Finding("sms-identity", where, "ok", f"active; {SENDER_ID_HINT}", page=SENDER_ID_PAGE)
        return Finding("sms-identity", where, "ok", "active")
    return Finding(
        "sms-identity", where, "FAIL", f"status {status}",
        "finish its registration in End User Messaging SMS", SMS_PAGE,
    )


def sms_spend_limit(clients: Clients, region: str, expected_usd: float) -> Finding:
    """End User Messaging SMS DescribeSpendLimits (``TEXT_MESSAGE_MONTHLY_SPEND_LIMIT``): the
    limit in force is ``EnforcedLimit`` when ``Overridden``, else ``MaxLimit`` (both whole US
    dollars a month; API Reference, "DescribeSpendLimits" and "SpendLimit")."""
    try:
        # Three limits at most (text, voice, media): one page.
        limits = clients("pinpoint-sms-voice-v2", region).describe_spend_limits().get("SpendLimits", [])
    except ClientError as err:
        return _denied("sms-spend-limit", region, err, "sms-voice:DescribeSpendLimits", SPEND_LIMITS_API)
    text = next((x for x in limits if x.get("Name") == "TEXT_MESSAGE_MONTHLY_SPEND_LIMIT"), None)
    if text is None:
        return Finding(
            "sms-spend-limit", region, "FAIL", "no SMS spending limit reported in this region",
            "open End User Messaging SMS in this region and request a spending quota", SPEND_LIMIT_PAGE,
        )
    limit = int(text["EnforcedLimit"] if text.get("Overridden") else text["MaxLimit"])
    which = "enforced" if text.get("Overridden") else "account"
    said = f"{which} limit ${limit} a month; the stack expects ${expected_usd:,.2f} of SMS"
    fix = (
        f"request an SMS spending quota of at least ${expected_usd * SMS_HEADROOM:,.0f} a month "
        "(or raise the enforced limit to the account limit)"
    )
    if limit < expected_usd:
        return Finding(
            "sms-spend-limit", region, "FAIL", f"{said}: sends stop before the month ends",
            fix, SPEND_LIMIT_PAGE,
        )
    if limit < expected_usd * SMS_HEADROOM:
        return Finding(
            "sms-spend-limit", region, "warn",
            f"{said}: less than {SMS_HEADROOM:g}x, a busy month stops sends", fix, SPEND_LIMIT_PAGE,
        )
    return Finding("sms-spend-limit", region, "ok", said)


def expected_sms_usd(graph: Graph) -> dict[str, float]:
    """Per region: the stack's expected monthly SMS spend at the planned volumes (``make cost``)."""
    items = cost.estimate(
        graph.resources, cost.load_usage(), cost.load_prices(), idle=False,
        assumptions=cost.Assumptions(cost.sms_countries(graph.config)),
    )
    found: dict[str, float] = {}
    for item in items:
        if item.kind == "sms":
            found[item.region] = found.get(item.region, 0.0) + item.usd
    return found


def receipt_rule_set(clients: Clients, region: str, own: str, activate: bool) -> Finding:
    """ses DescribeActiveReceiptRuleSet: one active set per account and region."""
    try:
        got = clients("ses", region).describe_active_receipt_rule_set()
    except ClientError as err:
        return _denied("receipt-rules", region, err, "ses:DescribeActiveReceiptRuleSet", RULE_SET_PAGE)
    active = (got.get("Metadata") or {}).get("Name")
    if activate:
        if active in (None, own):
            return Finding("receipt-rules", region, "ok", f"{own} becomes the active rule set")
        return Finding(
            "receipt-rules", region, "warn",
            f"`pulumi up` makes {own} active in place of {active}: {active}'s rules stop receiving",
            "move those rules into this stack, or set activateInboundRuleSet: false", RULE_SET_PAGE,
        )
    if active is None:
        return Finding(
            "receipt-rules", region, "warn", f"no rule set is active: {own} receives no mail",
            "deploy the stack that activates its rule set (prod), or set activateInboundRuleSet: true",
            RULE_SET_PAGE,
        )
    return Finding("receipt-rules", region, "ok", f"{active} is active ({own} stays inactive)")


def powertools_layer(clients: Clients, region: str, pinned: str | None) -> Finding:
    """The public Powertools layer parameter the program reads at preview (unless pinned)."""
    if pinned:
        return Finding("powertools", region, "ok", "layer pinned in powertoolsLayerArns")
    try:
        got = clients("ssm", region).get_parameter(Name=POWERTOOLS_PARAMETER)
    except ClientError as err:
        if _error_code(err) == "ParameterNotFound":
            return Finding(
                "powertools", region, "FAIL", f"{POWERTOOLS_PARAMETER} is not published here",
                "pin a layer ARN for this region in powertoolsLayerArns", POWERTOOLS_PAGE,
            )
        return _denied("powertools", region, err, "ssm:GetParameter", POWERTOOLS_PAGE)
    layer = str(got["Parameter"]["Value"]).rsplit(":", 2)
    return Finding("powertools", region, "ok", f"layer {layer[-2]} version {layer[-1]}")


SPLIT_ABOVE: int = DmSettings.model_fields["split_above"].default
PARTITION_CONTACTS: int = DmSettings.model_fields["partition_contacts"].default


def dm_capacity(
    clients: Clients,
    contacts: int | None,
    full_every: int = FULL_READ_EVERY_WEEKS,
    *,
    split_above: int = SPLIT_ABOVE,
    partition_contacts: int = PARTITION_CONTACTS,
) -> Finding:
    """dm's weekly run at the portal's size (``systems.dm.portalContacts``) under its
    ``fullReadEveryWeeks``, ``splitAbove`` and ``partitionContacts``: no AWS call."""
    del clients
    where = "systems.dm.portalContacts"
    if contacts is None:
        return Finding(
            "dm capacity", where, "warn", "the portal's size is not given",
            "set systems.dm.portalContacts (the contact count HubSpot shows) and rerun",
            DM_CAPACITY_PAGE,
        )
    found = capacity.forecast(
        contacts, full_every, split_above=split_above, partition_contacts=partition_contacts
    )
    detail = " ".join(found.lines())
    if found.fits:
        return Finding("dm capacity", where, "ok", detail)
    return Finding(
        "dm capacity", where, "FAIL", detail,
        "set systems.dm.splitAbove below this size so the run splits; a read longer than 60 "
        "dm-block invocations (about 6,000,000 contacts) does not fit either way",
        DM_CAPACITY_PAGE,
    )


def _models(settings: Any) -> Iterator[str]:
    for value in dict(settings).values():
        if isinstance(value, ModelChoice):
            yield from value.granted


def concurrency_need(graph: Graph) -> dict[str, int]:
    """Per region: the SQS consumers' maximum concurrency plus one for every other function."""
    need: dict[str, int] = {}
    capped: set[str] = set()
    for mapping in graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping"):
        cap = (mapping.inputs.get("scalingConfig") or {}).get("maximumConcurrency")
        if cap:
            capped.add(str(mapping.inputs.get("functionName")))
            region = _region(graph, str(mapping.inputs.get("functionName")))
            need[region] = need.get(region, 0) + int(cap)
    for function in graph.of_type("aws:lambda/function:Function"):
        if function.inputs["name"] not in capped:
            region = str(function.outputs["arn"]).split(":")[3]
            need[region] = need.get(region, 0) + 1
    return need


def _region(graph: Graph, function_name: str) -> str:
    function = graph.named("aws:lambda/function:Function", function_name)
    return str(function.outputs["arn"]).split(":")[3]


def plan(graph: Graph) -> list[Callable[[Clients], Finding]]:
    """Every check the stack needs, with its arguments, in print order."""
    config: StackConfig = graph.config
    systems = config.systems.enabled().values()
    checks: list[Callable[[Clients], Finding]] = []
    for region, model in sorted({(s.region, m) for s in systems for m in _models(s)}):
        checks.append(partial(bedrock_model, region=region, model_id=model))
    senders = {(s.region, str(getattr(s, "sender_email", "") or "")) for s in systems}
    mail = sorted((r, e.rsplit("@", 1)[1]) for r, e in senders if e)
    for region in sorted({r for r, _ in mail}):
        checks.append(partial(ses_account, region=region))
    for region, domain in mail:
        checks.append(
            partial(ses_identity, region=region, domain=domain, owner=config.mail_identity_owner)
        )
    for region, need in sorted(concurrency_need(graph).items()):
        checks.append(partial(lambda_concurrency, region=region, need=need))
    for region, (reserved, functions) in sorted(public_reservations(graph).items()):
        checks.append(
            partial(public_concurrency, region=region, reserved=reserved, functions=functions)
        )
    sms = {(s.region, str(getattr(s, "sms_origination_identity", "") or "")) for s in systems}
    for region, identity in sorted((r, i) for r, i in sms if i):
        checks.append(partial(sms_identity, region=region, identity=identity))
    for region, usd in sorted(expected_sms_usd(graph).items()):
        checks.append(partial(sms_spend_limit, region=region, expected_usd=usd))
    ler = config.systems.ler
    if ler is not None and ler.enabled:
        own = str(graph.of_type("aws:ses/receiptRuleSet:ReceiptRuleSet")[0].inputs["ruleSetName"])
        checks.append(
            partial(receipt_rule_set, region=ler.region, own=own, activate=ler.activate_inbound_rule_set)
        )
    for region in sorted({s.region for s in systems}):
        pinned = config.powertools_layer_arns.get(region)
        checks.append(partial(powertools_layer, region=region, pinned=pinned))
    dm = config.systems.dm
    if dm is not None and dm.enabled:
        checks.append(
            partial(
                dm_capacity,
                contacts=dm.portal_contacts,
                full_every=dm.full_read_every_weeks,
                split_above=dm.split_above,
                partition_contacts=dm.partition_contacts,
            )
        )
    return checks


def report(findings: Iterable[Finding]) -> Iterator[str]:
    """``status  check  where  detail``; for each finding not ok its fix and page, for an ok
    one with advice its page."""
    for f in findings:
        yield f"{f.status:<4}  {f.check:<18}  {f.where}: {f.detail}"
        if f.status != "ok":
            yield f"      fix: {f.fix} ({f.page})"
        elif f.page:
            yield f"      see: {f.page}"


def main(argv: list[str] | None = None, clients: Clients | None = None) -> int:
    parser = stack_command(__doc__ or "")
    options = parser.parse_args(argv)
    if clients is None and no_credentials("preflight"):
        return 2
    graph = plan_graph(options.stack)
    if graph is None:
        return 2
    made: dict[tuple[str, str], Any] = {}

    def default(service: str, region: str) -> Any:
        if (service, region) not in made:
            made[service, region] = boto3.client(service, region_name=region)  # type: ignore[call-overload]
        return made[service, region]

    findings = []
    for check in plan(graph):
        try:
            findings.append(check(clients or default))
        except BotoCoreError as err:  # an expired login, no network: one line, not a traceback
            name = getattr(check, "func", check).__name__
            where = str(getattr(check, "keywords", {}).get("region", ""))
            findings.append(Finding(
                name, where, "FAIL", f"{type(err).__name__}: {err}",
                "give the AWS CLI credentials (aws configure, AWS_PROFILE) and retry",
                CREDENTIALS_PAGE,
            ))
    print("\n".join(report(findings)))
    failed = sum(f.status == "FAIL" for f in findings)
    warned = sum(f.status == "warn" for f in findings)
    print(f"\npreflight {options.stack}: {len(findings)} checks, {failed} failed, {warned} warnings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
