"""The nudge: its words, and the messenger port that delivers it by SMS or email.

SMS goes through AWS End User Messaging SMS (``pinpoint-sms-voice-v2`` SendTextMessage) from
the configured origination identity: SNS Publish to a phone number can only be granted on
``Resource: "*"``, which this project forbids, while SendTextMessage is granted on the one
pool / phone number / sender id ARN. Email goes through SES (v2 SendEmail) from the configured
sender address, which the role may use as its only identity.

``Messenger`` is the port; ``AwsMessenger`` the real adapter (the fake is in testsupport.upsr).
A ``NudgeRejected`` means the service definitely did not send (an opted-out number, a bad
address, a refused identity); any other exception leaves it unknown whether the message left,
and the sender then never tries again (at most one nudge).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from handlers.common import html_kit as kit
from handlers.common.aws_clients import client
from handlers.common.sms import SEGMENT, fits_one_segment, gsm7_septets, to_gsm7
from handlers.upsell_recommender.domain import Channel, Contact

SMS_MESSAGE_TYPE = "PROMOTIONAL"
EMAIL_SUBJECT = "Something to go with your order"


@dataclass(frozen=True)
class Nudge:
    """One message to one customer; an email also has an HTML part beside its text."""

    contact: Contact
    subject: str
    text: str
    html: str = ""


class NudgeRejected(Exception):
    """The channel refused the message; nothing was sent. ``reason`` is a short code."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Messenger(Protocol):
    """Sends one nudge; returns the provider's message id."""

    def send(self, nudge: Nudge) -> str:
        """Deliver ``nudge`` or raise (``NudgeRejected`` when it definitely did not go)."""
        ...


def compose(contact: Contact, title: str, line: str, url: str, *, business: str) -> Nudge:
    """The nudge text: who writes (the shop's name first), greeting, the pitch, the one-tap
    link, how to stop. A message that does not name its sender reads like phishing to a
    customer, and carriers filter it as such."""
    hello = f"Hi {contact.first_name}," if contact.first_name else "Hi,"
    pitch = _sentence(line)
    if contact.channel is Channel.SMS:
        return Nudge(contact, EMAIL_SUBJECT, sms_text(contact.first_name, title, pitch, url, business))
    thanks = f"Thanks for your order with {business}! {pitch}"
    stop = "Not interested in suggestions like this? Reply to this email and we will stop."
    subject = f"{business}: {EMAIL_SUBJECT.lower()}"
    mail = kit.mail(
        subject,
        [hello, "", thanks, "", f"Add {title} to your cart in one tap:", url, "", business, "", stop],
        kit.join((
            kit.para(hello),
            kit.para(thanks),
            kit.actions(kit.button(url, f"Add {title} to your cart", primary=True, method="get")),
            kit.para(business),
            kit.detail(stop),
        )),
    )
    return Nudge(contact, mail.subject, mail.text, mail.html)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text + "." if text and text[-1] not in ".!?" else text


def sms_text(first_name: str | None, title: str, pitch: str, url: str, business: str) -> str:
    """The longest wording that fits one GSM-7 segment with its link: a second segment is a
    second charge, and one character outside GSM-7 would make it UCS-2 (70 a segment). The
    shop's name (first), the link and the opt-out are always whole; the pitch, the greeting,
    then the title give way."""

    shop = to_gsm7(business) + ":"
    hi = to_gsm7(f"Hi {first_name},") if first_name else ""
    name, pitch = to_gsm7(title) or "it", to_gsm7(pitch)
    stop = "Reply STOP to opt out."
    for words in (
        f"{hi} thanks for your order! {pitch} Add {name} in one tap:",
        f"{hi} thanks for your order! Add {name} in one tap:",
        f"{hi} add {name} to your order in one tap:",
        f"{hi} add {name}:",
        f"Add {name}:",
    ):
        words = " ".join(words.split())
        text = f"{shop} {words[:1].upper()}{words[1:]} {url} {stop}"  # "Thanks ...", "Add ..."
        if fits_one_segment(text):
            return text
    # A long title is cut to what is left beside the name, the link and the opt-out.
    room = SEGMENT - (gsm7_septets(f"{shop} Add ...: {url} {stop}") or SEGMENT)
    short = name[: max(room, 0)].rstrip()
    return f"{shop} Add {short}...: {url} {stop}" if short else f"{shop} Add it: {url} {stop}"


def _error_code(err: Exception) -> str | None:
    response = getattr(err, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return None if code is None else str(code)
    return None


class AwsMessenger:
    """SMS by End User Messaging SMS, email by SES v2; clients made on first use."""

    def __init__(
        self,
        *,
        origination_identity: str,
        sender_email: str,
        reply_to: str | None = None,
        sms_client: Callable[[], Any] | None = None,
        email_client: Callable[[], Any] | None = None,
    ) -> None:
        self.origination_identity = origination_identity
        self.sender_email = sender_email  # "Name <address>" (emails.from_address)
        self.reply_to = reply_to
        self._sms_client = sms_client or _client("pinpoint-sms-voice-v2")
        self._email_client = email_client or _client("sesv2")

    def send(self, nudge: Nudge) -> str:
        try:
            if nudge.contact.channel is Channel.SMS:
                answer = self._sms_client().send_text_message(
                    DestinationPhoneNumber=nudge.contact.address,
                    OriginationIdentity=self.origination_identity,
                    MessageBody=nudge.text,
                    MessageType=SMS_MESSAGE_TYPE,
                )
                return str(answer.get("MessageId", ""))
            body = {"Text": {"Data": nudge.text, "Charset": "UTF-8"}}
            if nudge.html:
                body["Html"] = {"Data": nudge.html, "Charset": "UTF-8"}
            answer = self._email_client().send_email(
                FromEmailAddress=self.sender_email,
                Destination={"ToAddresses": [nudge.contact.address]},
                ReplyToAddresses=[self.reply_to] if self.reply_to else [],
                Content={
                    "Simple": {
                        "Subject": {"Data": nudge.subject, "Charset": "UTF-8"},
                        "Body": body,
                    }
                },
            )
            return str(answer.get("MessageId", ""))
        except Exception as err:
            code = _error_code(err)
            if code is None:
                raise  # a timeout or a dropped connection: it may have been sent
            raise NudgeRejected(f"{nudge.contact.channel.value}:{code}") from err


def _client(service: str) -> Callable[[], Any]:
    def make() -> Any:
        return client(service)

    return make
