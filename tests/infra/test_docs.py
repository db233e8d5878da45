"""The documentation stays true to the program: ``make docs`` leaves the tree unchanged, the
README's function map fits the tree, and no relative link in a tracked Markdown file points
nowhere (a file, or a heading's anchor as GitHub renders it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from components.offline import docs, function_map
from components.systems import entry
from testsupport.graphs import GraphCache

ROOT = docs.ROOT


def test_make_docs_leaves_the_tree_unchanged(graphs: GraphCache) -> None:
    stale = [
        str(path.relative_to(ROOT))
        for path, named in docs.blocks(graphs.run).items()
        if docs.written(path, named) != path.read_text()
    ]
    assert stale == [], f"generated blocks differ from the program in {stale}: run `make docs`"


def test_fill_replaces_only_its_block() -> None:
    text = f"intro\n{docs.begin('a')}\nold\n{docs.end('a')}\nbetween\n{docs.begin('b')}\nb\n{docs.end('b')}\n"
    filled = docs.fill(text, "a", "new", "x.md")
    assert filled == text.replace("\nold\n", "\nnew\n")
    with pytest.raises(SystemExit, match=r"x\.md has no <!-- c:begin"):
        docs.fill(text, "c", "new", "x.md")


def test_the_function_map_fits_the_tree(graphs: GraphCache) -> None:
    places = function_map.places(graphs.run("dev"))
    assert function_map.problems(places) == []
    declared = {
        str(f.inputs["tags"]["crm:function"])
        for stack in ("dev", "prod")
        for f in graphs.run(stack).of_type("aws:lambda/function:Function")
    }
    assert {p.function for p in places} == declared
    for place in places:  # the step is read from the component's source: a real method
        class_name, _, method = place.step.partition(".")
        system = place.function.split("-", 1)[0]
        assert entry(system).class_name == class_name and callable(getattr(entry(system).load(), method))
        assert place.entry.endswith(f"/functions/{place.function.split('-', 1)[1].replace('-', '_')}.py")


def test_tests_are_found_by_name_before_the_explicit_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert function_map.conventional_tests("ler", "ler-junk-writer") == "tests/handlers/ler/test_ler_junk_writer.py"
    monkeypatch.setattr(
        function_map, "TESTS_ELSEWHERE", {"dm-score": ("dm/test_dm_flows.py", "dm/test_dm_matcher.py")}
    )
    listed = function_map.tests_of("dm", "dm-score", tmp_path)
    assert listed == ("tests/handlers/dm/test_dm_flows.py", "tests/handlers/dm/test_dm_matcher.py")
    conventional = tmp_path / "tests/handlers/dm/test_dm_score.py"
    conventional.parent.mkdir(parents=True)
    conventional.write_text("")
    assert function_map.tests_of("dm", "dm-score", tmp_path) == ("tests/handlers/dm/test_dm_score.py",)


def test_problems_name_a_missing_file_and_a_stale_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in ("c/s.py", "h/f.py", "tests/handlers/ler/test_ler_dedupe.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    monkeypatch.setattr(
        function_map, "TESTS_ELSEWHERE", {"ler-dedupe": ("ler/x.py",), "ler-gone": ("ler/x.py",)}
    )
    places = [
        function_map.Place("ler-dedupe", "L._dedupe", "c/s.py", "h/f.py", ("tests/handlers/ler/test_ler_dedupe.py",)),
        function_map.Place("ler-push", "", "c/s.py", "h/missing.py", ("tests/handlers/ler/test_ler_push.py",)),
    ]
    assert function_map.problems(places, tmp_path) == [
        "ler-push: no method of c/s.py calls function(<its name>)",
        "ler-push: h/missing.py does not exist",
        "ler-push: tests/handlers/ler/test_ler_push.py does not exist",
        "TESTS_ELSEWHERE['ler-dedupe'] is stale: tests/handlers/ler/test_ler_dedupe.py exists; remove the entry",
        "TESTS_ELSEWHERE names ler-gone, which no stack declares",
    ]


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    for line in _prose(text):
        match = _HEADING.match(line)
        if match:
            base = slug(match.group(1))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def linked(path: Path) -> set[Path]:
    """The files ``path`` links to (relative links only)."""
    found = set()
    for line in _prose(path.read_text()):
        for target in _LINK.findall(_CODE_SPAN.sub("", line)):
            file_part = target.partition("#")[0]
            if file_part and not _EXTERNAL.match(target):
                found.add((path.parent / file_part).resolve())
    return found


def dead_links(path: Path, root: Path) -> list[str]:
    """Each relative link of ``path`` whose file or anchor does not exist."""
    dead = []
    text = path.read_text()
    for line in _prose(text):
        for target in _LINK.findall(_CODE_SPAN.sub("", line)):
            if _EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}: {target}"
            if not resolved.exists():
                dead.append(f"{where} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved.read_text()):
                dead.append(f"{where} (no such heading)")
    return dead


def tracked_markdown(root: Path) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.md"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    return [root / name for name in listed.split("\0") if name]


def test_no_relative_link_points_nowhere() -> None:
    files = tracked_markdown(ROOT)
    assert ROOT / "README.md" in files
    dead = [link for path in files for link in dead_links(path, ROOT)]
    assert dead == []


def test_every_page_is_reachable_from_the_readme() -> None:
    pages = set(tracked_markdown(ROOT))
    reached, frontier = {ROOT / "README.md"}, [ROOT / "README.md"]
    while frontier:
        for target in linked(frontier.pop()):
            if target.is_dir() and (target / "README.md").is_file():
                target = target / "README.md"
            if target in pages and target not in reached:
                reached.add(target)
                frontier.append(target)
    assert sorted(str(p.relative_to(ROOT)) for p in pages - reached) == []


def test_a_dead_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Step 1. `make` it\n\n```\n[x](nowhere.md)\n```\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/a.md#step-1-make-it) [web](https://example.com) `[code](gone.md)`\n"
        "[file](docs/b.md) [anchor](docs/a.md#step-2) [self](#a-page)\n"
    )
    assert dead_links(tmp_path / "README.md", tmp_path) == [
        "README.md: docs/b.md (no such file)",
        "README.md: docs/a.md#step-2 (no such heading)",
        "README.md: #a-page (no such heading)",
    ]
    assert anchors((tmp_path / "docs" / "a.md").read_text()) == {"a-page", "step-1-make-it"}


def test_the_readme_fits_a_few_screens() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
