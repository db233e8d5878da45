"""A stack configuration problem, said in one line that names the key and never the value.

Its own module so that both the schema (``components/config.py``) and the stack file reader
(``components/config_source.py``) name it without importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PROJECT = "crm-automations"


@dataclass(frozen=True)
class Problem:
    """One thing wrong in the stack config: where (the key path) and what, never the value."""

    loc: tuple[int | str, ...]
    """Key path below the namespace: ``("systems", "upsr", "storeDomain")``."""
    message: str
    unknown_key: bool = False
    """The key itself is the problem (position: the key, not its value)."""

    @property
    def key(self) -> str:
        return _key_of(self.loc)


class ConfigError(ValueError):
    """A stack configuration problem: one line each, naming the key (and, once located, the
    file, line and column)."""

    def __init__(self, problems: str | Sequence[Problem], lines: Sequence[str] | None = None):
        self.problems: tuple[Problem, ...] = (
            (Problem((), problems),) if isinstance(problems, str) else tuple(problems)
        )
        self.lines = tuple(lines) if lines is not None else tuple(
            f"{p.key}: {p.message}" if p.loc else p.message for p in self.problems
        )
        super().__init__("\n".join(self.lines))


def _key_of(loc: tuple[int | str, ...]) -> str:
    return f"{PROJECT}:" + ".".join(str(part) for part in loc)
