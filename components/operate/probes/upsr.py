"""``make verify``'s probe of upsr: an ``orders/create`` webhook for a synthetic order (negative
id, no customer, one line) signed with the app's client secret for the store: signature, shop,
topic, parse and replay horizon, then the marker in upsr-orders marked ``check`` with no job (no
nudge, no history: upsr-order drops the customer of any check order). Removed: the marker. A
wrong signature answers 401.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import uuid

from components.operate.probing import Context, Failed, expect


def probe(c: Context) -> str:
    upsr = c.graph.config.systems.upsr
    assert upsr is not None
    fn, region = c.name("upsr-order"), c.region("upsr")
    value = c.target.secret(c.secrets["upsr-webhook-secret"])
    secret = str(json.loads(value)["client_secret"]) if value.startswith("{") else value
    # A synthetic order: a negative id no Shopify order has, no customer, one line.
    order_id = -int(uuid.uuid4().int % 10**12) - 1
    created = dt.datetime.fromtimestamp(c.target.now(), dt.UTC).isoformat()
    body = json.dumps({
        "id": order_id, "name": "#check", "created_at": created, "currency": "USD", "customer": None,
        "line_items": [{"sku": "check", "title": "make verify", "quantity": 1, "price": "1.00"}],
    }).encode()

    def sent(key: str) -> dict[str, str]:
        mac = base64.b64encode(hmac.new(key.encode(), body, hashlib.sha256).digest()).decode()
        return {
            "content-type": "application/json", "x-shopify-topic": "orders/create",
            "x-shopify-shop-domain": upsr.store_domain, "x-shopify-hmac-sha256": mac,
            "x-shopify-webhook-id": f"check-{uuid.uuid4().hex[:12]}",
        }

    expect(c.target.http(fn, region, "POST", "/", body, sent("check-wrong")), 401, "invalid_signature", "a wrong signature")
    orders, key = c.target.client("dynamodb", region), {"order_id": {"S": str(order_id)}}
    try:
        answer = c.target.http(fn, region, "POST", "/", body, sent(secret))
        expect(answer, 200, "", "a check order signed with upsr-webhook-secret for the store")
        found = orders.get_item(TableName=c.name("upsr-orders"), Key=key).get("Item")
        if not found or not found.get("check", {}).get("BOOL"):
            raise Failed(f"the check order answered 200 but no check marker is in {c.name('upsr-orders')}")
        if found.get("job_state", {}).get("S") != "none":
            raise Failed(f"the check order was given a job ({found.get('job_state')}): it could reach a customer")
    finally:
        orders.delete_item(TableName=c.name("upsr-orders"), Key=key)
    return "signature and shop verified, check order parsed and marked in upsr-orders (no job, no nudge) and removed"
