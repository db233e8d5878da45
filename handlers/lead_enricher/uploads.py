"""CSV uploads read row by row, with every row accounted for. No AWS here.

``csv_rows`` yields one ``CsvRow`` per data row of the file, in order, each either a lead or
the reason it is not one, so intake can queue the first and junk the second with its row
number. It never lets one bad row damage another:

* A quoted field may span lines (an address), but an unclosed quote does not swallow the rows
  after it: when a line that would continue the open field is itself a complete, quote-free
  row of the header's width, the quote was never closed. The opening line alone is refused
  (``malformed_row: unclosed quote``) and reading goes on with the next line.
* A row with a field over 128 KiB (the csv module's field limit) fails alone
  (``field_too_large``); the file goes on.
* Row numbers count data rows from 1 in file order (blank lines are not rows), so a resumed
  read that skips the first ``start_after`` rows sees the same numbers.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from handlers.lead_enricher.inputs import RawLead, from_mapping

MAX_FIELD_BYTES = 128 * 1024
"""The csv module's default field limit; a larger field fails its row, not the file."""
MAX_RECORD_LINES = 50
"""How many physical lines one quoted field may span before the quote counts as unclosed."""
_LINES = re.compile(r".*?(?:\r\n|\n|\r|$)", re.S)


@dataclass(frozen=True)
class CsvRow:
    """One data row: ``raw`` when it reads as a lead, else ``reason`` (and a snippet)."""

    row: int
    line: int
    raw: RawLead | None
    reason: str | None = None
    snippet: str = ""


def decode(data: bytes) -> str:
    """UTF-8 with or without a BOM; anything else as Latin-1 (spreadsheet exports)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _physical_lines(text: str) -> list[str]:
    return [m.group(0) for m in _LINES.finditer(text) if m.group(0)]


def _parse(text: str, dialect: Any) -> list[str] | None:
    """The one record in ``text``; None when a quoted field is still open at its end."""
    try:
        records = list(csv.reader(io.StringIO(text), dialect=dialect, strict=True))
    except csv.Error as err:
        if "unexpected end of data" in str(err):
            return None
        if "field larger than field limit" in str(err):
            raise
        records = list(csv.reader(io.StringIO(text), dialect=dialect))  # lenient, as before
    if len(records) != 1:
        return [] if not records else None
    return records[0]


def _quote_free_row(line: str, dialect: Any, width: int) -> bool:
    quote = getattr(dialect, "quotechar", '"') or '"'
    if quote in line or not line.strip():
        return False
    fields = _parse(line, dialect)
    return fields is not None and len(fields) == width


def csv_rows(data: bytes, *, start_after: int = 0) -> Iterator[CsvRow]:
    """Every data row of a CSV with a header row, after the first ``start_after`` rows."""
    text = decode(data)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    lines = _physical_lines(text)
    if not lines:
        return
    try:
        header = _parse(lines[0], dialect) or []
    except csv.Error:
        header = []
    width = len(header)
    index, row = 1, 0
    while index < len(lines):
        start = index
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        row += 1
        fields, consumed, reason = _record(lines, index, dialect, width)
        index += consumed
        if row <= start_after:
            continue
        if reason is not None or fields is None:
            yield CsvRow(row, start + 1, None, reason or "malformed_row", line[:200])
            continue
        values = {name: value for name, value in zip(header, fields, strict=False) if name}
        if not any(str(v or "").strip() for v in values.values()):
            yield CsvRow(row, start + 1, None, "empty_row")
            continue
        yield CsvRow(row, start + 1, from_mapping(values))


def _record(lines: list[str], index: int, dialect: Any, width: int) -> tuple[list[str] | None, int, str | None]:
    """(fields, physical lines consumed, reason when refused) for the record at ``index``."""
    joined = lines[index]
    if len(joined.encode("utf-8", "replace")) > MAX_FIELD_BYTES:
        return None, 1, "field_too_large"
    for extra in range(MAX_RECORD_LINES):
        if extra:
            following = lines[index + extra]
            if _quote_free_row(following, dialect, width):
                return None, 1, "malformed_row: unclosed quote"
            joined += following
            if len(joined.encode("utf-8", "replace")) > MAX_FIELD_BYTES:
                return None, 1, "malformed_row: unclosed quote"
        try:
            fields = _parse(joined, dialect)
        except csv.Error:
            return None, 1, "field_too_large"
        if fields is not None:
            return fields, extra + 1, None
        if index + extra + 1 >= len(lines):
            break
    return None, 1, "malformed_row: unclosed quote"


def from_csv(data: bytes) -> Iterator[tuple[int, RawLead]]:
    """(row number, lead) for each row of a CSV that reads as a lead (``csv_rows`` also
    reports the rows that do not)."""
    for row in csv_rows(data):
        if row.raw is not None:
            yield row.row, row.raw
