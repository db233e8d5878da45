"""``make secrets STACK=<stack>``: set every secret of the stack, each in its own region.

``pulumi up`` creates each secret empty (no value passes through Pulumi state or a Lambda
environment): a Secrets Manager secret without a value, or, with ``secretStore: ssm``, a
SecureString parameter holding the placeholder as version 1 (components/secret_slot.py). This command fills them: the keys the project owns (link keyrings, the email-hash
key, the intake secret) are generated; the credentials of outside services are read from a
prompt without echo (getpass) or, when stdin is not a terminal, from ``<name>=<value>`` lines on
stdin (never argv, so never in shell history or ``ps``). A value is checked against the shape
its provider documents before it is stored. A secret that already has a value is left alone
unless ``--replace <name>`` asks. The table it prints says set / generated / copied / already set
/ empty per system; no value is ever printed.

Provider shapes (cited where the check is):
- Shopify app client secret: ``shpss_`` + 32 characters, or the 32 hex characters of an older
  secret (https://shopify.dev/changelog/app-secret-key-length-has-increased); static Admin API
  tokens: ``shpat_``, ``shpca_`` or ``shppa_`` + 32 hex (Shopify API changelog, April 2020).
- HubSpot documents no token format (service keys and private app tokens are opaque bearer
  tokens, https://developers.hubspot.com/docs/apps/legacy-apps/authentication/intro-to-auth):
  checked only for what the handlers read (a bare token or ``{"token": ...}``) and for a value
  that is plainly another provider's.
"""

from __future__ import annotations

import argparse
import getpass
import json
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TextIO

import boto3
from botocore.exceptions import BotoCoreError

from components.config import ConfigError
from components.offline.engine import Graph
from components.operate import no_credentials, plan_graph
from handlers.common.link_tokens import Keyring

SHOPIFY_CLIENT_ID = re.compile(r"^[0-9a-f]{32}$")
SHOPIFY_CLIENT_SECRET = re.compile(r"^(shpss_[A-Za-z0-9]{32}|[0-9a-f]{32})$")
SHOPIFY_STATIC_TOKEN = re.compile(r"^(shpat|shpca|shppa)_[0-9a-f]{32}$")
_OTHER_PROVIDER = re.compile(r"^(shp[a-z]{2}_|pat-|sk_live_|AKIA)")


class ShapeError(ValueError):
    """A value not of its provider's documented shape (the message never holds the value)."""


def _opaque(what: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value or re.search(r"\s", value):
            raise ShapeError(f"{what}: one token without spaces")
        return value

    return check


def _hubspot(value: str) -> str:
    token = value
    if value.startswith("{"):
        try:
            token = str(json.loads(value)["token"])
        except (ValueError, KeyError, TypeError):
            raise ShapeError('HubSpot key: a bare token or JSON {"token": ...}') from None
    _opaque("HubSpot key")(token)
    if token.startswith(("shp", "sk_live_", "AKIA")):
        raise ShapeError("HubSpot key: this looks like another provider's secret")
    return value


def _store_key(value: str) -> str:
    if SHOPIFY_STATIC_TOKEN.match(value):
        return value
    try:
        data = json.loads(value)
        client_id, client_secret = str(data["client_id"]), str(data["client_secret"])
    except (ValueError, KeyError, TypeError):
        raise ShapeError(
            'Shopify store key: the app\'s client ID and client secret, or a static Admin API '
            "token (shpat_/shpca_/shppa_ and 32 hex characters)"
        ) from None
    if not SHOPIFY_CLIENT_ID.match(client_id):
        raise ShapeError("Shopify client ID: 32 hex characters (Dev Dashboard, app Settings)")
    if not SHOPIFY_CLIENT_SECRET.match(client_secret):
        raise ShapeError("Shopify client secret: shpss_ and 32 characters (or an older 32 hex)")
    return value


def _webhook_secret(value: str) -> str:
    if value.startswith("{"):
        return _store_key(value)
    if not SHOPIFY_CLIENT_SECRET.match(value):
        raise ShapeError("Shopify webhook key: the app's client secret, shpss_ and 32 characters")
    return value


def keyring() -> str:
    """A one-key signing keyring as ``handlers/common/link_tokens.Keyring`` reads it."""
    return json.dumps({"active_kid": "k1", "keys": {"k1": secrets.token_urlsafe(48)}})


def _keyring(value: str) -> str:
    try:
        Keyring.from_secret_string(value)
    except ValueError:
        raise ShapeError('keyring: JSON {"active_kid": ..., "keys": {kid: 32+ characters}}') from None
    return value


def random_key() -> str:
    """64 URL-safe random characters (48 bytes from the OS's CSPRNG)."""
    return secrets.token_urlsafe(48)


_SECRET = _opaque("generated key")


@dataclass(frozen=True)
class Kind:
    """How one secret gets its value."""

    source: Literal["generate", "ask", "store-key", "webhook-secret"]
    what: str
    """What to paste (or what is generated), said to the deployer."""
    check: Callable[[str], str]
    generate: Callable[[], str] | None = None


KINDS: dict[str, Kind] = {
    "dm-crm-read": Kind("ask", "HubSpot service key for dm-block (read contacts)", _hubspot),
    "dm-crm-write": Kind("ask", "HubSpot service key for dm-merge (the write scopes)", _hubspot),
    "dm-link-key": Kind("generate", "keyring of dm's review and undo links", _keyring, keyring),
    "ler-crm-key": Kind("ask", "HubSpot service key for ler-push (contacts read/write)", _hubspot),
    "ler-enrichment-key": Kind("ask", "People Data Labs or Apollo API key", _opaque("API key")),
    "ler-intake-secret": Kind("generate", "shared secret the intake's senders present", _SECRET, random_key),
    "ler-rescue-link-key": Kind("generate", "keyring of ler's junk digest rescue links", _keyring, keyring),
    "ls-email-hash-key": Kind("generate", "key of the enquiries' email hash", _SECRET, random_key),
    "ls-report-link-key": Kind("generate", "keyring of ls's report page links", _keyring, keyring),
    "upsr-store-key": Kind("store-key", "Shopify app client ID and client secret", _store_key),
    "upsr-webhook-secret": Kind(
        "webhook-secret", "Shopify webhook signing key (the app's client secret)", _webhook_secret
    ),
    "upsr-addlink-key": Kind("generate", "keyring of upsr's add-to-cart links", _keyring, keyring),
    "rrs-webhook-secret": Kind("ask", "signing secret of the job tool's webhooks", _opaque("signing secret")),
    "rrs-messaging-key": Kind("generate", "keyring of rrs's feedback links", _keyring, keyring),
    "ler-forget-salt": Kind("generate", "salt of the erased people's do-not-re-import hashes", _SECRET, random_key),
    "rrs-forget-salt": Kind("generate", "salt of the erased people's opt-out hashes", _SECRET, random_key),
    "upsr-forget-salt": Kind("generate", "salt of the erased people's opt-out hashes", _SECRET, random_key),
}


@dataclass(frozen=True)
class StackSecret:
    """One secret of the stack, as the plan declares it."""

    system: str
    name: str
    """The seed name (``dm-link-key``)."""
    physical: str
    """The name in its store (``dev-dm-link-key``, or ``/dev/dm-link-key`` for a parameter)."""
    region: str
    store: str = "secretsmanager"
    """``secretsmanager`` or ``ssm`` (boto3's service name for the store)."""


SECRET_TYPES = {"aws:secretsmanager/secret:Secret": "secretsmanager", "aws:ssm/parameter:Parameter": "ssm"}


def has_value(client: Any, secret: StackSecret) -> bool:
    """Whether the secret holds an operator's value, read from metadata only: a secret's
    current version (DescribeSecret), a parameter's version after the placeholder's 1
    (DescribeParameters). Neither needs the value or a decrypt."""
    if secret.store == "ssm":
        found = client.describe_parameters(
            ParameterFilters=[{"Key": "Name", "Option": "Equals", "Values": [secret.physical]}]
        ).get("Parameters") or []
        return any(int(p.get("Version") or 0) > 1 for p in found)
    versions = client.describe_secret(SecretId=secret.physical).get("VersionIdsToStages") or {}
    return any("AWSCURRENT" in stages for stages in versions.values())


def put_value(client: Any, secret: StackSecret, value: str) -> None:
    """Store ``value`` as the secret's new current version."""
    if secret.store == "ssm":
        client.put_parameter(Name=secret.physical, Value=value, Type="SecureString", Overwrite=True)
    else:
        client.put_secret_value(SecretId=secret.physical, SecretString=value)


def read_value(client: Any, secret: StackSecret) -> str:
    """The secret's current value (``make verify`` signs its checks with it)."""
    if secret.store == "ssm":
        return str(client.get_parameter(Name=secret.physical, WithDecryption=True)["Parameter"]["Value"])
    return str(client.get_secret_value(SecretId=secret.physical)["SecretString"])


def read_command(secret: StackSecret) -> str:
    """The AWS CLI line that prints the secret's value (for the operator to run, never us)."""
    if secret.store == "ssm":
        return (f"aws ssm get-parameter --name {secret.physical} --with-decryption --region "
                f"{secret.region} --query Parameter.Value --output text")
    return (f"aws secretsmanager get-secret-value --secret-id {secret.physical} --region "
            f"{secret.region} --query SecretString --output text")


def stack_secrets(stack: str) -> list[StackSecret] | None:
    """Every secret of the stack with its region, read from the offline plan's graph; None
    after printing the stack's config error."""
    graph = plan_graph(stack)
    return None if graph is None else secrets_in(graph)


def secrets_in(graph: Graph) -> list[StackSecret]:
    """Every secret of a graph with its system and region, in config order."""
    found = []
    for type_token, store in SECRET_TYPES.items():
        for secret in graph.of_type(type_token):
            tags = secret.inputs.get("tags") or {}
            region = str(secret.outputs["arn"]).split(":")[3]
            found.append(
                StackSecret(tags["crm:system"], tags["crm:secret"], secret.inputs["name"], region, store)
            )
    order = list(graph.config.systems.enabled())
    return sorted(found, key=lambda s: (order.index(s.system), s.name))


class Values:
    """Where asked values come from: a no-echo prompt on a terminal, else ``name=value`` lines."""

    def __init__(self, stdin: TextIO, prompt: Callable[[str], str] = getpass.getpass) -> None:
        self.interactive = stdin.isatty()
        self.prompt = prompt
        self.given: dict[str, str] = {}
        if not self.interactive:
            for number, line in enumerate(stdin.read().splitlines(), 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                name, sep, value = line.partition("=")
                if not sep or name.strip() not in KINDS:
                    raise ConfigError(
                        f"stdin line {number}: expected <secret name>=<value> with a name of "
                        f"{', '.join(sorted(KINDS))} (the value is not shown)"
                    )
                self.given[name.strip()] = value.strip()

    def ask(self, name: str, label: str) -> str:
        if self.interactive:
            return self.prompt(f"{label} (empty: skip): ").strip()
        return self.given.get(name, "")


def _store_value(values: Values) -> str:
    """upsr-store-key: client ID and secret asked separately (or a legacy static token)."""
    if not values.interactive:
        return values.given.get("upsr-store-key", "")
    first = values.ask("upsr-store-key", "Shopify app client ID (or a legacy shpat_ token)")
    if not first or SHOPIFY_STATIC_TOKEN.match(first):
        return first
    second = values.ask("upsr-store-key", "Shopify app client secret (shpss_...)")
    return json.dumps({"client_id": first, "client_secret": second})


def run(
    stack_secrets_: list[StackSecret],
    values: Values,
    client_for: Callable[[str, str], Any],
    replace: frozenset[str] = frozenset(),
) -> list[tuple[StackSecret, str]]:
    """Fill the secrets; return each with its status (never its value)."""
    results: list[tuple[StackSecret, str]] = []
    stored: dict[str, str] = {}
    for secret in stack_secrets_:
        kind = KINDS[secret.name]
        client = client_for(secret.store, secret.region)
        if has_value(client, secret) and secret.name not in replace:
            results.append((secret, "already set"))
            continue
        status = "set"
        if kind.source == "generate":
            assert kind.generate is not None
            value, status = kind.generate(), "generated"
        elif kind.source == "store-key":
            value = _store_value(values)
        elif kind.source == "webhook-secret":
            # Shopify signs webhooks with the app's client secret: upsr-store-key's JSON serves
            # both (handlers/upsell_recommender/shopify_auth.py reads client_secret from it).
            value = values.given.get(secret.name, "") or stored.get("upsr-store-key", "")
            if value and not values.given.get(secret.name):
                status = "copied from upsr-store-key"
            elif not value and values.interactive:
                value = values.ask(secret.name, f"{secret.physical}: {kind.what}")
        else:
            value = values.ask(secret.name, f"{secret.physical}: {kind.what}")
        if not value:
            results.append((secret, "empty"))
            continue
        try:
            kind.check(value)
        except ShapeError as err:
            results.append((secret, f"refused: {err}"))
            continue
        put_value(client, secret, value)
        if secret.name == "upsr-store-key" and value.startswith("{"):
            stored[secret.name] = value
        results.append((secret, status))
    return results


def table(results: list[tuple[StackSecret, str]]) -> Iterator[str]:
    """``system  secret  region  status``, one row per secret."""
    rows = [("system", "secret", "region", "status")] + [
        (s.system, s.physical, s.region, status) for s, status in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        yield "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3]


def main(argv: list[str] | None = None, stdin: TextIO = sys.stdin) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev")
    parser.add_argument(
        "--replace", default="", help="comma-separated secret names to set again (dm-link-key,...)"
    )
    options = parser.parse_args(argv)
    if no_credentials("secrets"):
        return 2
    found = stack_secrets(options.stack)
    if found is None:
        return 2
    try:
        values = Values(stdin)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    replace = frozenset(n.strip() for n in options.replace.split(",") if n.strip())
    unknown = replace - set(KINDS)
    if unknown:
        print(f"--replace: no secret named {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    sessions: dict[tuple[str, str], Any] = {}

    def client_for(service: str, region: str) -> Any:
        if (service, region) not in sessions:
            sessions[service, region] = boto3.client(service, region_name=region)  # type: ignore[call-overload]
        return sessions[service, region]

    try:
        results = run(found, values, client_for, replace)
    except BotoCoreError as err:  # an expired login, no network: one line, not a traceback
        print(f"make secrets: {type(err).__name__}: {err} (aws configure, AWS_PROFILE)", file=sys.stderr)
        return 2
    print("\n".join(table(results)))
    generated = [s for s, status in results if status == "generated" and s.name == "ler-intake-secret"]
    for s in generated:
        print(
            f"\n{s.physical} is for your form or webhook sender: read it with `{read_command(s)}` "
            "(never printed here)."
        )
    return 1 if any(status == "empty" or status.startswith("refused") for _, status in results) else 0


if __name__ == "__main__":
    sys.exit(main())
