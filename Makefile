# labelaudit: `make demo` and `make test` work from a clean clone on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test test-fast test-all test-integration bench bench-detection lint clean browser

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned: the CPU wheel; anything else pulls CUDA packages.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium for the review app's end-to-end browser test (skipped when absent).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "warning: could not install chromium; the browser test will be skipped" >&2; \
	  else echo "warning: chromium missing and not root; the browser test will be skipped" >&2; fi; }

demo: $(STAMP)
	$(BIN)/python examples/make_demo_data.py --check
	$(BIN)/labelaudit scan examples/news_headlines.csv --text text --label label --id id \
	    --out examples/out/issues.csv --top 60
	$(BIN)/python examples/demo_report.py examples/out/issues.csv examples/news_headlines_truth.csv

test: $(STAMP) browser
	$(BIN)/python -m pytest -q -p no:cacheprovider

# the edit-test loop: everything but the tests that train networks, start servers or a
# cluster, or drive a browser (marked `heavy`, see tests/conftest.py), on two workers of one
# thread each (no torch training left to compete for the cores); `make test` runs them all
test-fast: $(STAMP)
	LABELAUDIT_THREADS=1 $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 \
		-m "not slow and not integration and not heavy"

test-all: $(STAMP) browser
	$(BIN)/python -m pytest -q -p no:cacheprovider -m ""

# The live round trip with a real Label Studio (tests marked integration). Label Studio is
# installed pinned (the labelstudio extra's version) in an environment of its own: it pins
# pyarrow<25 and Django-era packages that would move labelaudit's.
LS_VENV := .venv-labelstudio
test-integration: $(STAMP)
	test -x $(LS_VENV)/bin/label-studio || { $(PYTHON) -m venv $(LS_VENV) && \
	  $(LS_VENV)/bin/pip install -q "label-studio==1.23.2"; }
	LABEL_STUDIO_BIN=$(LS_VENV)/bin/label-studio $(BIN)/python -m pytest -q -p no:cacheprovider \
	  -m integration

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# The default scan against a strong TF-IDF peer on real, verified label errors (../shared/data):
# 4 dev sets x 3 fold seeds, paired bootstrap; writes benchmarks/results/detection.{md,json,png}.
bench-detection: $(STAMP)
	$(BIN)/python -m benchmarks.detection

# vermin: nothing in src needs a Python newer than requires-python's minimum (3.11)
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/vermin --no-tips --violations --eval-annotations -t=3.11- src

# The sdist, then the wheel built from that sdist (python -m build's default; --sdist --wheel
# would build both from the tree), in dist/. The old egg-info goes first: setuptools puts every
# file its SOURCES.txt lists into a new sdist, which would hide a file missing from package-data.
.PHONY: wheel
wheel: $(STAMP)
	rm -rf src/labelaudit.egg-info
	$(BIN)/python -m build --outdir dist/

# The documentation site (docs/, mkdocs.yml) into site/, strictly: a broken link or anchor, a
# missing API reference or a tutorial cell that fails stops it. Open site/index.html.
.PHONY: docs
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
