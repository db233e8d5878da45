"""``make verify``'s probe of dm: puts a proposal ``check-a-<id>#check-b-<id>`` marked ``check``
(TTL one hour) in dm-pairs; GET /review renders it; POST /confirm, twice: dm-merge claims the
pair (its TransactWriteItems on dm-decisions and dm-merges), sees the mark, releases claim and
link before the CRM is read, and answers 409 ``check`` both times. Removed: the proposal and any
claim, lock or link marker left by a failed release. A forged link answers 403.
"""

from __future__ import annotations

import uuid

from components.operate.probing import Context, Failed, expect
from handlers.common.link_tokens import Keyring, issue_token, verify_token


def probe(c: Context) -> str:
    keyring = Keyring.from_secret_string(c.target.secret(c.secrets["dm-link-key"]))
    check = uuid.uuid4().hex[:12]
    low, high = f"check-a-{check}", f"check-b-{check}"  # low < high, as pair keys are
    pair = f"{low}#{high}"
    now = c.target.now()

    def link(action: str) -> str:
        return issue_token(keyring, subject=pair, action=action, ttl_seconds=600, now=now)

    fn, region = c.name("dm-merge"), c.region("dm")
    expect(c.target.http(fn, region, "GET", "/review?t=forged"), 403, "invalid_link", "a forged link")
    pairs, token = c.target.client("dynamodb", region), ""
    # The synthetic proposal: marked check (dm-merge refuses to merge it) and expiring in an
    # hour by dm-pairs' TTL should this command die before it removes it.
    pairs.put_item(TableName=c.name("dm-pairs"), Item={
        "pair_key": {"S": pair}, "band": {"S": "propose"}, "run_id": {"S": "check"},
        "check": {"BOOL": True}, "ttl": {"N": str(int(now) + 3600)},
        "explanation": {"S": "A check by make verify: nothing will be merged."},
    })
    try:
        page = c.target.http(fn, region, "GET", f"/review?t={link('review')}", headers={"accept": "text/html"})
        expect(page, 200, "", "the review page of a check proposal")
        token = link("confirm")
        confirm = f"/confirm?t={token}"
        json_ = {"accept": "application/json"}
        expect(c.target.http(fn, region, "POST", confirm, headers=json_), 409, "check", "confirming a check proposal")
        # The claim was written and released with its link: the same link is refused the same way.
        expect(c.target.http(fn, region, "POST", confirm, headers=json_), 409, "check", "the same confirm link again")
        decision = pairs.get_item(TableName=c.name("dm-decisions"), Key={"pair_key": {"S": pair}})
        if "Item" in decision:
            raise Failed(f"confirming a check proposal left a decision in {c.name('dm-decisions')}")
    finally:
        # The proposal, and whatever a claim that was never released left (a failed check).
        pairs.delete_item(TableName=c.name("dm-pairs"), Key={"pair_key": {"S": pair}})
        pairs.delete_item(TableName=c.name("dm-decisions"), Key={"pair_key": {"S": pair}})
        token_id = verify_token(token, keyring, action="confirm", now=now).token_id if token else ""
        for held in (f"lock#{low}", f"lock#{high}", f"link#{token_id}"):
            pairs.delete_item(TableName=c.name("dm-merges"), Key={"merge_id": {"S": held}})
    return "review page served, confirm claimed and released a check proposal (nothing merged), forged link refused"
