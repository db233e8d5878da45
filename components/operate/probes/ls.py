"""``make verify``'s probe of ls: an arrival from a search engine with the stack's first site
origin: its touch is in ls-touches and is then deleted; a foreign origin answers 403; the
report, SigV4-signed, 200; where the report is mailed, last week's page link signed with
ls-report-link-key opens (200) on ls-report-page and a forged one answers 403.
"""

from __future__ import annotations

import datetime as dt
import json

from components.operate.probing import Context, Failed, expect
from handlers.common.link_tokens import Keyring
from handlers.source_attributor import report_link, report_mail


def probe(c: Context) -> str:
    ls = c.graph.config.systems.ls
    assert ls is not None
    fn, region = c.name("ls-capture"), c.region("ls")
    site = ls.site_origins[0]
    arrival = json.dumps(
        {"kind": "arrival", "url": f"{site}/?check=1", "referrer": "https://www.google.com/"}
    ).encode()
    browser = {"content-type": "text/plain;charset=UTF-8", "user-agent": "Mozilla/5.0 (crm-automations verify)"}
    foreign = c.target.http(fn, region, "POST", "/", arrival, {**browser, "origin": "https://check.invalid"})
    expect(foreign, 403, "origin_not_allowed", "a beacon from a foreign origin")
    answer = c.target.http(fn, region, "POST", "/", arrival, {**browser, "origin": site})
    expect(answer, 200, "", "an arrival from a search engine")
    visitor = str(json.loads(answer.body)["visitor_id"])
    table = c.target.client("dynamodb", region)
    touches = c.name("ls-touches")
    found = table.query(
        TableName=touches, KeyConditionExpression="visitor_id = :v",
        ExpressionAttributeValues={":v": {"S": visitor}},
    )["Items"]
    for item in found:  # the check removes what it wrote
        table.delete_item(TableName=touches, Key={"visitor_id": item["visitor_id"], "at": item["at"]})
    if len(found) != 1:
        raise Failed(f"the arrival answered 200 but {len(found)} touches were recorded in {touches}")
    report = c.target.http(c.name("ls-report"), region, "GET", "/?mode=lenient", sign=True)
    expect(report, 200, "", "the report, SigV4-signed")
    if "ls-report-link-key" not in c.secrets:  # the report is not mailed: no page
        return "touch recorded in ls-touches and removed, foreign origin refused, report read"

    keyring = Keyring.from_secret_string(c.target.secret(c.secrets["ls-report-link-key"]))
    page = c.name("ls-report-page")
    forged = c.target.http(page, region, "GET", f"{report_link.PATH}?t=forged", headers={"accept": "application/json"})
    expect(forged, 403, "invalid_link", "a forged report page link")
    today = dt.datetime.fromtimestamp(c.target.now(), dt.UTC).date()
    link = report_link.signer("", keyring, days=1, now=c.target.now())(*report_mail.last_week(today))
    opened = c.target.http(page, region, "GET", link.url, headers={"accept": "text/html"})
    expect(opened, 200, "", "last week's report page link, signed with ls-report-link-key")
    return (
        "touch recorded in ls-touches and removed, foreign origin refused, report read, "
        "report page link opened, forged link refused"
    )
