"""EventBridge Scheduler's schedule expression grammar, checked before a schedule is declared.

The mock engine accepts any string; ``CreateSchedule`` refuses what this grammar refuses
(``ValidationException``). Encoded from the EventBridge Scheduler User Guide, "Schedule types
in EventBridge Scheduler"
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html):

- ``rate(value unit)``: a positive whole number and a unit of minute | minutes | hour | hours |
  day | days; the unit is singular for 1 and plural otherwise (``rate(1 hour)``,
  ``rate(5 minutes)``).
- ``cron(minutes hours day-of-month month day-of-week year)``: six fields separated by white
  space. Values, and the wildcards each field accepts:

  ============  ===============  ================
  minutes       0-59             , - * /
  hours         0-23             , - * /
  day-of-month  1-31             , - * ? / L W
  month         1-12 or JAN-DEC  , - * /
  day-of-week   1-7 or SUN-SAT   , - * ? L #
  year          1970-2199        , - * /
  ============  ===============  ================

  Day-of-month and day-of-week cannot both be given: exactly one of them is ``?``. ``L`` is
  the last day of the month (day-of-month) or of the week, ``5L`` the last Thursday
  (day-of-week); ``3W`` the weekday nearest the 3rd; ``3#2`` the second Tuesday of the month,
  and a field with ``#`` holds that one expression only.
- ``at(yyyy-mm-ddThh:mm:ss)``: one date and time that exists.

Where the guide is silent this module is strict, so a doubtful value is refused here rather
than at ``pulumi up``: a range runs upward (``MON-FRI``, not ``FRI-MON``), and ``L``/``W`` stand
alone in their field (``LW`` allowed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

PAGE = "https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html"

_RATE = re.compile(r"^rate\(([0-9]+) ([a-z]+)\)$")
_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_CRON = re.compile(r"^cron\((.*)\)$")
_UNITS = {"minute": "minutes", "hour": "hours", "day": "days"}

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


class ScheduleExpressionError(ValueError):
    """A schedule expression Scheduler would refuse, with the reason."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...]  # names for low..high, in order
    wildcards: str


_FIELDS = (
    _Field("minutes", 0, 59, (), ",-*/"),
    _Field("hours", 0, 23, (), ",-*/"),
    _Field("day-of-month", 1, 31, (), ",-*?/LW"),
    _Field("month", 1, 12, MONTHS, ",-*/"),
    _Field("day-of-week", 1, 7, DAYS, ",-*?L#"),
    _Field("year", 1970, 2199, (), ",-*/"),
)


def check(expression: str) -> str:
    """Return ``expression`` if Scheduler accepts it; else raise ScheduleExpressionError."""
    if not isinstance(expression, str):
        raise ScheduleExpressionError("a schedule expression is a string")
    if expression.startswith("rate("):
        _rate(expression)
    elif expression.startswith("cron("):
        _cron(expression)
    elif expression.startswith("at("):
        _at(expression)
    else:
        raise ScheduleExpressionError("it is neither rate(...), cron(...) nor at(...)")
    return expression


def _rate(expression: str) -> None:
    match = _RATE.match(expression)
    if not match:
        raise ScheduleExpressionError("a rate is rate(value unit), e.g. rate(5 minutes)")
    value_text, unit = match.groups()
    value = int(value_text)
    if value < 1 or value_text != str(value):
        raise ScheduleExpressionError(f"the rate value {value_text} is not a positive number")
    singular = set(_UNITS)
    plural = set(_UNITS.values())
    if unit not in singular | plural:
        raise ScheduleExpressionError(f"the unit {unit!r} is not minute(s), hour(s) or day(s)")
    if value == 1 and unit not in singular:
        raise ScheduleExpressionError(f"a rate of 1 takes the singular unit: rate(1 {unit[:-1]})")
    if value != 1 and unit in singular:
        raise ScheduleExpressionError(
            f"a rate of {value} takes the plural unit: rate({value} {_UNITS[unit]})"
        )


def _at(expression: str) -> None:
    match = _AT.match(expression)
    if not match:
        raise ScheduleExpressionError("a one-time schedule is at(yyyy-mm-ddThh:mm:ss)")
    try:
        datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        raise ScheduleExpressionError(f"{match.group(1)} is not a date and time") from None


def _cron(expression: str) -> None:
    match = _CRON.match(expression)
    fields = match.group(1).split() if match else []
    if len(fields) != 6:
        raise ScheduleExpressionError(
            f"cron takes six fields (minutes hours day-of-month month day-of-week year), "
            f"not {len(fields)}"
        )
    for spec, text in zip(_FIELDS, fields, strict=True):
        _field(spec, text.upper())
    day_of_month, day_of_week = fields[2], fields[4]
    if (day_of_month == "?") == (day_of_week == "?"):
        raise ScheduleExpressionError(
            "exactly one of day-of-month and day-of-week must be '?' "
            f"(given {day_of_month!r} and {day_of_week!r})"
        )


def _field(spec: _Field, text: str) -> None:
    def bad(why: str) -> ScheduleExpressionError:
        return ScheduleExpressionError(f"{spec.name} {text!r}: {why}")

    if text == "?":
        if "?" not in spec.wildcards:
            raise bad("'?' is only for day-of-month or day-of-week")
        return
    if spec.name == "day-of-month" and (text in ("L", "LW") or re.fullmatch(r"\d+W", text)):
        if text.endswith("W") and text != "LW":
            _value(spec, text[:-1], bad)
        return
    if spec.name == "day-of-week":
        if text == "L":
            return
        if re.fullmatch(r"[0-9A-Z]+L", text):
            _value(spec, text[:-1], bad)
            return
        if "#" in text:
            day, _, nth = text.partition("#")
            if "," in text or not re.fullmatch(r"[1-5]", nth):
                raise bad("'#' takes one day and its nth occurrence 1-5 (e.g. 3#2), alone")
            _value(spec, day, bad)
            return
    for item in text.split(","):
        if not item:
            raise bad("an empty item in a list")
        base, slash, step = item.partition("/")
        if slash:
            if "/" not in spec.wildcards:
                raise bad("'/' is not allowed in this field")
            if not re.fullmatch(r"[1-9]\d*", step) or int(step) > spec.high:
                raise bad(f"the increment {step!r} is not a number from 1 to {spec.high}")
        if base == "*":
            continue
        start, dash, end = base.partition("-")
        low = _value(spec, start, bad)
        if dash:
            high = _value(spec, end, bad)
            if high < low:
                raise bad(f"the range {base} runs backwards")


def _value(spec: _Field, text: str, bad: Callable[[str], ScheduleExpressionError]) -> int:
    if text.isdigit():
        number = int(text)
    elif text in spec.names:
        number = spec.low + spec.names.index(text)
    elif text in ("L", "W", "LW", "?", "*") or (text[:-1].isdigit() and text[-1:] in "LW#"):
        raise bad(f"{text!r} stands alone in its field (no lists, ranges or increments)")
    else:
        allowed = f"{spec.low}-{spec.high}" + (
            f" or {spec.names[0]}-{spec.names[-1]}" if spec.names else ""
        )
        raise bad(f"{text!r} is not a value ({allowed})")
    if not spec.low <= number <= spec.high:
        raise bad(f"{number} is outside {spec.low}-{spec.high}")
    return number
