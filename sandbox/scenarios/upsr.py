"""Upsell recommender: a catalogue sync, an order (delivered three times), a nudge, a tap.

The store is ``sandbox.standins.ShopifyStandIn``, a Shopify store as documented today holding a
small camping catalogue: upsr-catalog-sync runs the real adapter against it, minting its Admin
API token by the client-credentials grant from the Dev Dashboard app's client id and secret in
``upsr-store-key``, keeping it for the container and renewing it once it nears its 24-hour
expiry. Webhooks are signed with the same client secret, as Shopify signs app webhooks. The model
stand-in proposes every candidate it is shown, so the day shows the catalogue rules disposing
(out of stock, already owned, too dear) and one add-on surviving. The handlers read the time
from the one clock (``handlers.common.clock``), which the sandbox drives, so "two hours later"
and "three days later" are the clock moving, not waiting.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from sandbox.core import HttpAnswer, Sandbox
from sandbox.report import Report

SHOP = "example-shop.myshopify.com"
CLIENT_ID = "sandbox-dev-dashboard-client-id"
WEBHOOK_SECRET = "shpss_sandbox_client_secret_0123456789"
"""The app's client secret: it mints Admin API tokens and signs the app's webhooks."""
CLIENT = json.dumps({"client_id": CLIENT_ID, "client_secret": WEBHOOK_SECRET})
ADDLINK_KEYRING = json.dumps(
    {"active_kid": "k1", "keys": {"k1": "sandbox-addlink-key-" + "k" * 24}}
)
PHONE = "+447700900123"
ANN = {"id": 7001, "first_name": "Ann", "email": "ann@example.org", "phone": PHONE}
"""The day's customer, as an order's ``customer`` names them."""


def _catalogue() -> list[Any]:
    # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
    from handlers.upsell_recommender.domain import CatalogueItem

    def item(
        sku: str,
        variant: str,
        category: str,
        price: str,
        complements: tuple[str, ...] = (),
        stock: int | None = 10,
    ) -> CatalogueItem:
        return CatalogueItem(
            sku=sku,
            variant_id=variant,
            product_id=variant[:2],
            title=sku.title(),
            category=category,
            complements=frozenset(complements),
            price=Decimal(price),
            stock=stock,
            available=True,
        )

    return [
        item("TENT-2P", "1001", "tents", "200.00", ("sleeping-mats", "lanterns")),
        item("MAT-1", "2001", "sleeping-mats", "40.00", ("tents",)),
        item("MAT-PRO", "2002", "sleeping-mats", "150.00"),
        item("LANTERN-1", "3001", "lanterns", "25.00", stock=0),
        item("STOVE-1", "4001", "stoves", "60.00"),
    ]


def _order(order_id: int, created: dt.datetime, buyer: Mapping[str, Any] = ANN) -> dict[str, Any]:
    """A tent order by ``buyer`` (an order's ``customer``: id, names, email, phone), who takes
    SMS marketing and not email."""
    return {
        "id": order_id,
        "name": f"#{order_id}",
        "created_at": created.isoformat(),
        "currency": "GBP",
        "subtotal_price": "200.00",
        "total_price": "205.00",
        "line_items": [
            {
                "id": 1,
                "sku": "TENT-2P",
                "variant_id": 1001,
                "title": "Tent 2P",
                "quantity": 1,
                "price": "200.00",
            }
        ],
        "email": buyer["email"],
        "customer": {
            **buyer,
            "sms_marketing_consent": {"state": "subscribed"},
            "email_marketing_consent": {"state": "not_subscribed"},
        },
    }


def _propose_every_candidate(request: Any) -> dict[str, Any]:
    """The model stand-in: every candidate SKU in the prompt, in the order listed."""
    prompt = " ".join(b.get("text", "") for m in request["messages"] for b in m["content"])
    candidates = json.loads(prompt.rsplit("\n", 1)[-1])
    return {
        "suggestions": [
            {"sku": c["sku"], "line": f"Goes well with your {c['category']}"}
            for c in candidates[:3]
        ]
    }



def shopify_webhook(
    sb: Sandbox, function: str, topic: str, payload: dict[str, Any], webhook_id: str,
    secret: str = WEBHOOK_SECRET,
) -> HttpAnswer:
    """``payload`` delivered to ``function``'s URL as Shopify delivers ``topic``: the body's
    HMAC-SHA256 in base64 with the app's secret, the shop's domain and the delivery's id."""
    body = json.dumps(payload).encode()
    signature = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
    headers = {
        "content-type": "application/json",
        "x-shopify-topic": topic,
        "x-shopify-shop-domain": SHOP,
        "x-shopify-hmac-sha256": signature,
        "x-shopify-webhook-id": webhook_id,
    }
    return sb.http(function, "POST", "/", body=body, headers=headers)

class UpsellDay:
    key = "upsr"
    title = "Upsell recommender"

    def __init__(self) -> None:
        self.shop: Any = None

    def prepare(self, sb: Sandbox) -> None:
        # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
        from handlers.common.entry import registry
        from handlers.upsell_recommender.functions import catalog_sync
        from sandbox.standins import ShopifyStandIn

        sb.set_secret("upsr-webhook-secret", CLIENT)  # the same JSON: its client_secret signs
        sb.set_secret("upsr-store-key", CLIENT)
        sb.set_secret("upsr-addlink-key", ADDLINK_KEYRING)
        sb.set_secret("upsr-forget-salt", "sandbox-upsr-forget-salt-" + "s" * 40)
        self.shop = ShopifyStandIn(
            CLIENT_ID, WEBHOOK_SECRET, _catalogue(), lambda: sb.clock.now().timestamp()
        )
        # One warm container: the wired service's token cache outlives invocations.
        registry.override(catalog_sync, opener=self.shop)
        sb.model.by_function[sb.name("upsr-picker")] = _propose_every_candidate

    def _webhook(self, sb: Sandbox, payload: dict[str, Any], secret: str = WEBHOOK_SECRET) -> int:
        return shopify_webhook(sb, "upsr-order", "orders/create", payload, f"wh-{payload['id']}", secret).status

    def play(self, sb: Sandbox, report: Report) -> None:
        with report.step("The 15-minute catalogue sync pulls the store's products") as step:
            sb.fire("upsr-catalog-sync")
            sb.drain()
            step.state("upsr-catalogue", sorted(i["sku"] for i in _products(sb)))
            step.note(
                f"Admin API tokens minted by the client-credentials grant: {self.shop.grants}"
            )
        report.check(
            "the sync minted one Admin API token from the app's client credentials",
            self.shop.grants == 1 and len(_products(sb)) == 5,
            f"grants {self.shop.grants}, rows {len(_products(sb))}",
        )
        with report.step("Ann orders a tent; Shopify delivers the webhook three times") as step:
            payload = _order(5001, sb.clock.now() - dt.timedelta(minutes=1))
            statuses = [self._webhook(sb, payload) for _ in range(3)]
            forged = self._webhook(sb, _order(5002, sb.clock.now()), secret="not-the-secret")
            step.note(f"deliveries: {statuses}; a forged delivery: HTTP {forged}")
            sb.drain()
            offers = [o for o in sb.items("upsr-offers") if o.get("sku")]
            step.state("upsr-offers", [(o.get("sku"), o.get("state")) for o in offers])
        report.check(
            "three deliveries make one order and one offer; a forged one is refused",
            len(sb.items("upsr-orders")) == 1 and len(offers) == 1 and forged == 401,
            f"statuses {statuses}, forged {forged}",
        )
        with report.step(
            "Two hours pass: the next 5-minute sender run releases the due nudge"
        ) as step:
            sb.advance(hours=2, minutes=10)
            sb.drain()
            nudges = [m for m in sb.outbox.messages if m.channel == "sms" and PHONE in m.to]
            step.state(
                "upsr-offers", [(o.get("sku"), o.get("state")) for o in sb.items("upsr-offers")]
            )
        report.check(
            "one SMS nudge with a one-tap link",
            len(nudges) == 1,
            nudges[0].text if nudges else "none sent",
        )
        with report.step("Ann taps the link in the SMS") as step:
            link = re.search(r"http://127\.0\.0\.1:\d+/\S*", nudges[0].text if nudges else "")
            tap = None
            if link:
                path = link.group(0).split("/", 3)[3]
                tap = sb.http(
                    "upsr-addlink",
                    "GET",
                    "/" + path,
                    headers={"user-agent": "Mozilla/5.0 (iPhone) Mobile/15E148"},
                )
                step.note(
                    f"HTTP {tap.status} -> {({k.lower(): v for k, v in tap.headers.items()}).get('location')}"
                )
            sb.drain()
        offer = next((o for o in sb.items("upsr-offers") if o.get("sku")), {})
        location = {k.lower(): v for k, v in tap.headers.items()}.get("location", "") if tap else ""
        report.check(
            "the tap redirects to the store's cart and marks the offer taken",
            tap is not None
            and tap.status == 302
            and location.startswith(f"https://{SHOP}/cart/")
            and offer.get("state") == "taken",
            f"{location} state={offer.get('state')}",
        )
        with report.step(
            "Three days later the hourly sweep closes windows and reports to the owner"
        ) as step:
            sb.advance(days=3)
            sb.drain()
        report.check(
            "the model proposed, the catalogue disposed: the offer is the in-stock mat",
            offer.get("sku") == "MAT-1",
            str(offer.get("sku")),
        )
        report.check(
            "the token was kept across syncs and renewed before its 24 hours ran out",
            self.shop.grants == 2 and self.shop.refused == 0,
            f"grants {self.shop.grants}, calls with an expired token {self.shop.refused}",
        )
        with report.step("Shopify relays Ann's request for her data (customers/data_request)") as step:
            request = {
                "shop_id": 954889, "shop_domain": SHOP, "orders_requested": [5001],
                "customer": {"id": ANN["id"], "email": ANN["email"], "phone": PHONE},
                "data_request": {"id": 9999},
            }
            asked = shopify_webhook(sb, "upsr-compliance", "customers/data_request", request, "wh-dr-9999")
            exports = [m for m in sb.outbox.messages
                       if m.function == sb.name("upsr-compliance") and "9999" in m.subject]
            step.note(f"HTTP {asked.status}; mails to the owner: {len(exports)}")
        report.check(
            "the owner is mailed what upsr holds about Ann; nothing is erased",
            asked.status == 200 and len(exports) == 1 and len(sb.items("upsr-orders")) == 1,
            f"HTTP {asked.status}, mails {len(exports)}",
        )
        report.check(
            "no call was denied",
            not [d for d in sb.denials() if (d.function or "").startswith(sb.name("upsr-"))],
        )


SCENARIO = UpsellDay()


def _products(sb: Any) -> list[dict[str, Any]]:
    """The catalogue's product rows (the sync's completion marker is not one)."""
    # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
    from handlers.upsell_recommender.catalogue import MARKER_SKU

    return [i for i in sb.items("upsr-catalogue") if i.get("sku") != MARKER_SKU]
