# Every target installs what it needs on first use: `make test` works from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV := .venv
PY := $(VENV)/bin/python
UV := $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)
STACK ?= dev
JSON ?=
BASE ?=
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help install test lint typecheck unit plan docs bench-libs bench-init bench-dm bench-dm-read bench-ls demo sandbox clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(UV):
	python3 -m pip install --quiet --user uv || python3 -m pip install --quiet uv

$(VENV)/.installed: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --quiet
	@touch $@

POLICY_VENV := policies/venv

# The policy pack's own venv (PulumiPolicy.yaml names it), from the pack's requirements: what an
# enforcing CLI builds for the published pack, and what `pulumi preview --policy-pack policies`
# runs in. From uv's cache when it holds them, else from PyPI.
$(POLICY_VENV)/.installed: policies/requirements.txt | $(UV)
	$(UV) venv --quiet --allow-existing $(POLICY_VENV)
	$(UV) pip install --quiet --offline --python $(POLICY_VENV)/bin/python -r $< 2>/dev/null \
	  || $(UV) pip install --quiet --python $(POLICY_VENV)/bin/python -r $<
	@touch $@

install: $(VENV)/.installed $(POLICY_VENV)/.installed ## create .venv from uv.lock, policies/venv from policies/requirements.txt

lint: install ## ruff
	$(VENV)/bin/ruff check .

typecheck: install ## mypy (strict on components/ and policies/)
	$(VENV)/bin/mypy components policies handlers

unit: install ## pytest on two workers; an idle worker takes tests queued on the other (worksteal)
	$(VENV)/bin/pytest -n 2 --dist worksteal

# mypy (one core, about 40 s without a cache) runs beside pytest, whose two workers leave a
# core idle part of the time: `make test` takes about the time of pytest alone.
test: lint ## everything CI runs: ruff, then mypy beside pytest
	@$(MAKE) --no-print-directory -j 2 typecheck unit

plan: install ## offline plan of a stack on the mock engine: make plan STACK=dev [JSON=plan.json] [BASE=saved.json]
	$(PY) -m components.offline.plan --stack $(STACK) $(if $(JSON),--json $(JSON)) $(if $(BASE),--base $(BASE))

docs: install ## regenerate README.md's generated blocks: the config reference and the per-system tables
	$(PY) -m components.config_reference --write
	$(PY) -m components.offline.system_reference --write

bench-init: install ## per function: archive size, import time, cold first invocation (plays make demo)
	$(PY) benchmarks/bench_init.py

bench-dm: install ## duplicate merger accuracy and scale (installs the comparison baselines)
	$(UV) sync --frozen --inexact --quiet --group bench
	$(PY) benchmarks/bench_dm.py

bench-dm-read: install ## dm-block's HubSpot read at 100k and 1M contacts (simulated latency and limits)
	$(PY) benchmarks/bench_hubspot_read.py

bench-libs: install ## our secrets and Function URL helpers against Powertools': import time, lines, behaviour
	$(PY) benchmarks/bench_runtime_libraries.py

bench-ls: install ## lead source attributor capture and report throughput
	$(PY) benchmarks/bench_ls.py

demo: install ## the whole dev stack on this machine, a scripted day per system
	$(PY) -m sandbox demo

sandbox: install ## the same local environment, left running
	$(PY) -m sandbox serve

clean: ## remove build outputs and the venv
	rm -rf build $(VENV) $(POLICY_VENV)
