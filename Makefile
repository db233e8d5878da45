# Every target installs what it needs on first use: `make test` works from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV := .venv
PY := $(VENV)/bin/python
# uv from PATH, else a copy bootstrapped into .tools/uv: a venv of the system Python (allowed
# under PEP 668, whose EXTERNALLY-MANAGED marker refuses `pip install --user`; pip inside a venv
# ignores it), so no sudo, no ~/.local/bin to put on PATH.
PYTHON ?= python3
UV_SPEC ?= uv>=0.9,<0.14
UV_HOME := .tools/uv
UV := $(shell command -v uv 2>/dev/null || echo $(UV_HOME)/bin/uv)
STACK ?= dev
JSON ?=
BASE ?=
# The commit of the release before this one (0.1.0); `make test` upgrades from it.
PREVIOUS_RELEASE := 37ebbbf
FROM ?= $(PREVIOUS_RELEASE)
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help uv install browser secrets preflight verify teardown test lint typecheck unit upgrade-check plan cost docs deploy-policy bench-libs bench-init bench-dm bench-dm-read bench-dm-week bench-ls bench-ls-views bench-pack demo sandbox clean bench-abuse forget export-person

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(UV_HOME)/bin/uv:
	@$(PYTHON) -m venv $(UV_HOME) || { rm -rf $(UV_HOME); echo "make install: '$(PYTHON) -m venv' failed: install your Python's venv module (Debian/Ubuntu: apt install python3-venv) or uv (https://docs.astral.sh/uv/getting-started/installation/)" >&2; exit 1; }
	$(UV_HOME)/bin/python -m pip install --quiet --disable-pip-version-check '$(UV_SPEC)'

uv: $(UV) ## uv on PATH, else bootstrapped into .tools/uv (no sudo, any system Python)

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

# The what-people-see tests and make demo's screenshots render pages in a headless Chromium or
# Chrome, found where it is ($$CHROME, $$CHROMIUM, the usual places, PATH: testsupport/tools.py).
# Only root on Debian gets it installed (apt-get); anyone else is told in one line how to get
# it, and the checks skip (fail under CI=true) and make demo leaves the screenshots out.
FIND_BROWSER = $(PY) -m testsupport.tools browser --install

browser: install ## a headless Chromium or Chrome: found where it is, installed only as root on Debian
	@$(FIND_BROWSER)

lint: install ## ruff
	$(VENV)/bin/ruff check .

typecheck: install ## mypy, strict, on every Python folder (components, policies, handlers, sandbox, testsupport, bootstrap, tests, benchmarks)
	$(VENV)/bin/mypy components policies handlers sandbox testsupport bootstrap tests benchmarks

unit: install ## pytest on two workers; an idle worker takes tests queued on the other (worksteal)
	@$(FIND_BROWSER) --quiet
	$(VENV)/bin/pytest -n 2 --dist worksteal

upgrade-check: install ## an upgrade with work in flight, FROM a commit (default: the previous release) to this checkout: make upgrade-check FROM=37ebbbf [STACK=dev,prod]
	$(PY) -m sandbox.upgrade_check --from $(FROM) --stack $(STACK)

# mypy (one core, about 40 s without a cache) runs beside pytest, whose two workers leave a
# core idle part of the time; the upgrade check from the previous release, both stacks (about
# 45 s each on an idle machine, one core), takes mypy's slot when it finishes.
test: lint ## everything CI runs: ruff, then mypy and the upgrade check beside pytest
	@$(MAKE) --no-print-directory -j 2 typecheck unit upgrade-check FROM=$(PREVIOUS_RELEASE) STACK=dev,prod

plan: install ## offline plan of a stack on the mock engine: make plan STACK=dev [JSON=plan.json] [BASE=saved.json]
	$(PY) -m components.offline.plan --stack $(STACK) $(if $(JSON),--json $(JSON)) $(if $(BASE),--base $(BASE))

cost: install ## monthly bill from the plan, idle and at volumes: make cost STACK=prod [VOLUMES=usage.yml]
	$(PY) -m components.offline.cost $(if $(filter command line,$(origin STACK)),--stack $(STACK)) $(if $(VOLUMES),--volumes $(VOLUMES))

deploy-policy: install ## regenerate bootstrap/generated/<stack>.json, the pipeline roles' policies, from both stacks' graphs
	$(PY) -m bootstrap.deploy_policy

docs: install ## regenerate the docs' generated blocks: config reference, system tables, cost, function map
	$(PY) -m components.offline.docs

bench-init: install ## per function: archive size, import time, cold first invocation (plays make demo)
	$(PY) benchmarks/bench_init.py

bench-dm: install ## duplicate merger accuracy and scale (installs the comparison baselines)
	$(UV) sync --frozen --inexact --quiet --group bench
	$(PY) benchmarks/bench_dm.py

bench-dm-read: install ## dm-block's HubSpot read at 100k and 1M contacts (simulated latency and limits)
	$(PY) benchmarks/bench_hubspot_read.py

bench-dm-week: install ## a week's dm-block work (changes only) against a full run's, at 20k and 100k contacts
	$(PY) benchmarks/bench_dm_week.py

bench-libs: install ## our secrets and Function URL helpers against Powertools': import time, lines, behaviour
	$(PY) benchmarks/bench_runtime_libraries.py

bench-ls: install ## lead source attributor capture and report throughput
	$(PY) benchmarks/bench_ls.py

bench-ls-views: install ## one ls report link opened for 60 s on the sandbox: DynamoDB reads per view
	$(PY) benchmarks/bench_report_views.py

bench-pack: install ## the policy pack over both stacks' plans: seconds per evaluation, cold and warm
	$(PY) benchmarks/bench_pack.py
bench-abuse: install ## every public Function URL, N=10 and 100 forged and valid requests on the sandbox: cost per request; fails if it grows with N
	$(PY) benchmarks/bench_abuse.py

demo: install ## a scripted day per system; every page, mail and SMS written to build/see/
	@$(FIND_BROWSER) --quiet
	$(PY) -m testsupport.gallery build/see
	$(PY) -m sandbox demo --messages build/see/sandbox

sandbox: install ## the same local environment, left running, after each system's scripted day (its data)
	$(PY) -m sandbox serve --scenarios

clean: ## remove build outputs, the venvs and the bootstrapped uv
	rm -rf build $(VENV) $(POLICY_VENV) .tools

secrets: install ## set the stack's secrets, each in its region: make secrets STACK=dev [REPLACE=dm-link-key]
	$(PY) -m components.operate.stack_secrets --stack $(STACK) $(if $(REPLACE),--replace $(REPLACE))

preflight: install ## with AWS credentials, before `pulumi up`: model access, SES, quotas, SMS, layer (STACK=dev)
	$(PY) -m components.operate.preflight --stack $(STACK)

verify: install ## after `pulumi up`: each system runs one signed check through its real writes (STACK=dev; SYSTEM=rrs; SANDBOX=http://127.0.0.1:8700; WAIT=300 seconds for ler's chain)
	$(PY) -m components.operate.verify --stack $(STACK) $(if $(SYSTEM),--system $(SYSTEM)) $(if $(SANDBOX),--sandbox $(SANDBOX)) $(if $(WAIT),--wait $(WAIT))

# One person's identifiers, as make forget and make export-person pass them on.
PERSON = $(if $(EMAIL),--email '$(EMAIL)') $(if $(PHONE),--phone '$(PHONE)') $(if $(CUSTOMER),--customer '$(CUSTOMER)') $(if $(CONTACT),--contact '$(CONTACT)') $(if $(SANDBOX),--sandbox $(SANDBOX))

forget: install ## erase a person from all five systems: make forget STACK=dev EMAIL=… | PHONE=… | CUSTOMER=… | CONTACT=… [DRY_RUN=1] [SANDBOX=url]
	$(PY) -m components.operate.forget --stack $(STACK) $(PERSON) $(if $(DRY_RUN),--dry-run)

export-person: install ## everything the five systems hold about a person, one JSON document (same options as forget)
	$(PY) -m components.operate.forget --stack $(STACK) $(PERSON) --export

teardown: install ## print, in order, the commands that remove a stack (prod: lifting its protections)
	$(PY) -m components.operate.teardown --stack $(STACK)
