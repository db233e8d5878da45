"""Secrets: fetched at call time through Powertools Parameters, cached for a TTL, never from env.

Powertools reads the wall clock itself (``datetime.now()`` in its ``parameters.base`` module) and
takes no clock, so the expiry test moves that module's ``datetime``: it still exercises the
library's own expiry check, but depends on where the library reads the time.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from aws_lambda_powertools.utilities.parameters import base as powertools_base

from handlers.common.aws_clients import client
from handlers.common.secrets import (
    SecretCache,
    SecretError,
    get_secret,
    get_secret_bytes,
    get_secret_field,
    secret_id_from_env,
)


class MovedClock(dt.datetime):
    """``datetime`` whose ``now()`` is the real time plus ``offset``."""

    offset = dt.timedelta()

    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> MovedClock:
        moved = dt.datetime.now(tz) + cls.offset
        return cls.fromtimestamp(moved.timestamp(), tz)


class CountingClient:
    """Counts GetSecretValue calls made through moto."""

    def __init__(self) -> None:
        self.calls = 0

    def get_secret_value(self, *, SecretId: str) -> Any:
        self.calls += 1
        return client("secretsmanager").get_secret_value(SecretId=SecretId)


@pytest.fixture
def store(aws: None) -> Any:
    sm = client("secretsmanager")
    sm.create_secret(Name="rrs/webhook-signing", SecretString="first-value")
    sm.create_secret(
        Name="upsr/store-api", SecretString=json.dumps({"api_key": "k-123", "shop": "demo"})
    )
    sm.create_secret(Name="bin", SecretBinary=b"\x00\x01binary")
    return sm


def test_cache_serves_within_ttl_and_refetches_after(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(powertools_base, "datetime", MovedClock)
    counting = CountingClient()
    cache = SecretCache(ttl_seconds=300, client_factory=lambda: counting)
    assert cache.get_string("rrs/webhook-signing") == "first-value"
    store.put_secret_value(SecretId="rrs/webhook-signing", SecretString="rotated-value")
    monkeypatch.setattr(MovedClock, "offset", dt.timedelta(seconds=290))
    assert cache.get_string("rrs/webhook-signing") == "first-value"
    assert counting.calls == 1
    monkeypatch.setattr(MovedClock, "offset", dt.timedelta(seconds=301))
    assert cache.get_string("rrs/webhook-signing") == "rotated-value"
    assert counting.calls == 2


def test_zero_ttl_always_fetches(store: Any) -> None:
    counting = CountingClient()
    cache = SecretCache(ttl_seconds=0, client_factory=lambda: counting)
    cache.get_string("rrs/webhook-signing")
    cache.get_string("rrs/webhook-signing")
    assert counting.calls == 2


def test_invalidate_forces_a_fetch(store: Any) -> None:
    counting = CountingClient()
    cache = SecretCache(client_factory=lambda: counting)
    cache.get_string("rrs/webhook-signing")
    cache.invalidate("rrs/webhook-signing")
    cache.get_string("rrs/webhook-signing")
    cache.get_string("rrs/webhook-signing")
    assert counting.calls == 2
    cache.invalidate()
    cache.get_string("rrs/webhook-signing")
    assert counting.calls == 3


def test_json_fields(store: Any) -> None:
    cache = SecretCache()
    assert cache.get_json("upsr/store-api") == {"api_key": "k-123", "shop": "demo"}
    assert cache.get_field("upsr/store-api", "api_key") == "k-123"
    with pytest.raises(SecretError, match="missing"):
        cache.get_field("upsr/store-api", "missing")
    with pytest.raises(SecretError, match="not JSON"):
        cache.get_json("rrs/webhook-signing")


def test_binary_secret(store: Any) -> None:
    cache = SecretCache()
    assert cache.get_bytes("bin") == b"\x00\x01binary"
    assert cache.get_bytes("rrs/webhook-signing") == b"first-value"


def test_missing_secret_is_a_secret_error(store: Any) -> None:
    with pytest.raises(SecretError, match=r"'nope'.*ResourceNotFoundException"):
        SecretCache().get_string("nope")


def test_module_helpers_use_the_default_cache(store: Any) -> None:
    assert get_secret("rrs/webhook-signing") == "first-value"
    assert get_secret_field("upsr/store-api", "shop") == "demo"
    assert get_secret_bytes("bin") == b"\x00\x01binary"


def test_env_holds_only_the_name(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_SECRET_ID", "rrs/webhook-signing")
    assert get_secret(secret_id_from_env("WEBHOOK_SECRET_ID")) == "first-value"
    arn = store.describe_secret(SecretId="rrs/webhook-signing")["ARN"]
    monkeypatch.setenv("WEBHOOK_SECRET_ID", arn)
    assert secret_id_from_env("WEBHOOK_SECRET_ID") == arn


@pytest.mark.parametrize("value", ["", "  ", '{"api_key": "k"}', "two words", 'sk_live_"quoted"'])
def test_env_values_that_are_not_ids_are_refused(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBHOOK_SECRET_ID", value)
    with pytest.raises(SecretError):
        secret_id_from_env("WEBHOOK_SECRET_ID")


def test_unset_env_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBHOOK_SECRET_ID", raising=False)
    with pytest.raises(SecretError, match="not set"):
        secret_id_from_env("WEBHOOK_SECRET_ID")


class CountingSsm:
    """Counts GetParameter calls made through moto, and whether each asked for decryption."""

    def __init__(self) -> None:
        self.calls: list[bool] = []

    def get_parameter(self, *, Name: str, WithDecryption: bool = False) -> Any:
        self.calls.append(WithDecryption)
        return client("ssm").get_parameter(Name=Name, WithDecryption=WithDecryption)


def test_parameter_store_securestring_is_read_decrypted_and_cached(aws: None) -> None:
    # secretStore: ssm. A leading "/" names a parameter; the value comes back decrypted once
    # and is then served from the cache like a secret.
    client("ssm").put_parameter(Name="/dev/rrs-webhook-secret", Value="s3cr3t", Type="SecureString")
    counting = CountingSsm()
    cache = SecretCache(ttl_seconds=300, ssm_client_factory=lambda: counting)
    assert cache.get_string("/dev/rrs-webhook-secret") == "s3cr3t"
    assert cache.get_string("/dev/rrs-webhook-secret") == "s3cr3t"
    assert counting.calls == [True]


def test_parameter_placeholder_is_not_a_credential(aws: None) -> None:
    from handlers.common.secrets import PARAMETER_PLACEHOLDER

    client("ssm").put_parameter(
        Name="/dev/upsr-store-api-key", Value=PARAMETER_PLACEHOLDER, Type="SecureString"
    )
    with pytest.raises(SecretError, match="no value yet"):
        SecretCache().get_string("/dev/upsr-store-api-key")


def test_missing_parameter_names_the_call(aws: None) -> None:
    with pytest.raises(SecretError, match="GetParameter failed: ParameterNotFound"):
        SecretCache().get_string("/dev/dm-crm-read")


def test_placeholder_matches_the_slot() -> None:
    from components.secret_slot import PLACEHOLDER
    from handlers.common.secrets import PARAMETER_PLACEHOLDER

    assert PLACEHOLDER == PARAMETER_PLACEHOLDER


def test_parameter_ids_are_told_from_secret_ids() -> None:
    from handlers.common.secrets import is_parameter

    assert is_parameter("/dev/dm-crm-read")
    assert is_parameter("arn:aws:ssm:eu-west-2:123456789012:parameter/dev/dm-crm-read")
    assert not is_parameter("dev-dm-crm-read")
    assert not is_parameter("arn:aws:secretsmanager:eu-west-2:123456789012:secret:dev-x-AbCdEf")


def test_a_throttled_parameter_read_is_retried_with_back_off_then_named_throttled(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parameter Store's shared rate refused every attempt: the SDK's standard mode tried three
    times, sleeping between (its exponential back-off), and the error says throttled."""
    import time

    from botocore.awsrequest import AWSResponse, HTTPHeaders

    from handlers.common.secrets import SecretThrottled

    client("ssm").put_parameter(Name="/dev/ls-report-link-key", Value="k", Type="SecureString")
    ssm = client("ssm")
    attempts: list[str] = []

    class Raw:
        def stream(self, **_: Any) -> Any:
            yield b'{"__type": "ThrottlingException", "message": "Rate exceeded"}'

    def throttle(request: Any, **_: Any) -> AWSResponse:
        attempts.append(request.url)
        headers = HTTPHeaders()
        headers["x-amzn-ErrorType"] = "ThrottlingException"
        return AWSResponse(request.url, 400, headers, Raw())

    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    ssm.meta.events.register_first("before-send.ssm.GetParameter", throttle)
    try:
        with pytest.raises(SecretThrottled, match="GetParameter throttled: ThrottlingException"):
            SecretCache(ssm_client_factory=lambda: ssm).get_string("/dev/ls-report-link-key")
    finally:
        ssm.meta.events.unregister("before-send.ssm.GetParameter", throttle)
    assert len(attempts) == 3 and len(sleeps) == 2 and all(s > 0 for s in sleeps)
    assert SecretCache().get_string("/dev/ls-report-link-key") == "k"  # the rate recovered
