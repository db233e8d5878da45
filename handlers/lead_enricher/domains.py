"""Mail domains the rules know: throwaway inboxes (junk) and free personal mail (no company).

A subdomain counts as its parent (``eu.mailinator.com`` is Mailinator). The lists are short on
purpose: they catch the common cases cheaply, and the filter weighs everything else.
"""

from __future__ import annotations

DISPOSABLE = frozenset(
    {
        "10minutemail.com",
        "20minutemail.com",
        "33mail.com",
        "anonbox.net",
        "burnermail.io",
        "discard.email",
        "dispostable.com",
        "emailondeck.com",
        "fakeinbox.com",
        "getairmail.com",
        "getnada.com",
        "guerrillamail.biz",
        "guerrillamail.com",
        "guerrillamail.de",
        "guerrillamail.net",
        "guerrillamail.org",
        "guerrillamailblock.com",
        "harakirimail.com",
        "incognitomail.org",
        "jetable.org",
        "mailcatch.com",
        "maildrop.cc",
        "mailinator.com",
        "mailinator.net",
        "mailnesia.com",
        "mailpoof.com",
        "mintemail.com",
        "moakt.com",
        "mohmal.com",
        "mytemp.email",
        "nada.email",
        "sharklasers.com",
        "spam4.me",
        "spambox.us",
        "spamgourmet.com",
        "temp-mail.org",
        "tempail.com",
        "tempinbox.com",
        "tempmail.com",
        "tempmail.net",
        "tempmailo.com",
        "tempr.email",
        "throwawaymail.com",
        "tmpmail.org",
        "trashmail.com",
        "trashmail.de",
        "trashmail.net",
        "yopmail.com",
        "yopmail.fr",
        "yopmail.net",
    }
)

FREE_MAIL = frozenset(
    {
        "aol.com",
        "btinternet.com",
        "fastmail.com",
        "gmail.com",
        "gmx.com",
        "gmx.de",
        "gmx.net",
        "googlemail.com",
        "hotmail.co.uk",
        "hotmail.com",
        "hotmail.fr",
        "icloud.com",
        "live.co.uk",
        "live.com",
        "mac.com",
        "mail.com",
        "me.com",
        "msn.com",
        "ntlworld.com",
        "outlook.com",
        "proton.me",
        "protonmail.com",
        "qq.com",
        "sky.com",
        "talktalk.net",
        "tiscali.co.uk",
        "virginmedia.com",
        "web.de",
        "yahoo.co.uk",
        "yahoo.com",
        "yahoo.fr",
        "yandex.com",
        "yandex.ru",
        "ymail.com",
        "zoho.com",
    }
)

PLACEHOLDER = frozenset({"example.com", "example.org", "example.net", "test.com", "domain.com"})
"""Domains people type when they do not want to give an address."""


def _in(domain: str | None, listed: frozenset[str]) -> bool:
    if not domain:
        return False
    labels = domain.lower().strip(".").split(".")
    return any(".".join(labels[i:]) in listed for i in range(len(labels) - 1))


def is_disposable(domain: str | None) -> bool:
    """A throwaway-inbox domain (or a subdomain of one)."""
    return _in(domain, DISPOSABLE)


def is_free_mail(domain: str | None) -> bool:
    """A personal mailbox provider: the domain says nothing about the person's company."""
    return _in(domain, FREE_MAIL)


def is_placeholder(domain: str | None) -> bool:
    """A domain typed to avoid giving one (example.com and friends)."""
    return _in(domain, PLACEHOLDER)
