# Everything runs in this Makefile's own virtual environment (.venv by default).
# `make profile` is the main job; `make test` runs the whole suite.
PYTHON ?= python3
# The driver to run on: `make profile DRIVER=scylla-driver==3.29.12` (any release pip can install)
# gets a virtual environment of its own, .venv-<distribution>-<version>.
DEFAULT_DRIVER := cassandra-driver==3.30.1
DRIVER ?= $(DEFAULT_DRIVER)
VENV ?= $(if $(filter $(DEFAULT_DRIVER),$(DRIVER)),.venv,.venv-$(subst ==,-,$(DRIVER)))
BIN := $(VENV)/bin
PY := $(BIN)/python
DEPS := $(VENV)/.deps-installed

# Options of `make profile`: make profile PATTERN=sync FACTORY=cached_named_tuple_factory
# CONNECTION=pyfactories profiles with pyfactories' connection class (connection.cluster_options())
PATTERN ?=
FACTORY ?=
CONNECTION ?=
# `make profile` runs the default set (its own rounds and length unless these are given);
# `make profile-full` runs the full grid with REPEAT rounds of PROFILE_OPS operations
REPEAT ?= 3
PROFILE_OPS ?= 10000
PROFILE_ARGS ?=
FUZZ_ARGS ?=
# Options of `make bench`, e.g. BENCH_ARGS="--server-pid 1234" for a node on this machine it did not start
BENCH_ARGS ?=
NODES ?= 3

# `make asan`: the extensions built with AddressSanitizer and UBSan in a copy of this tree
# (.cache/asan), and the fuzz suite run against them with $(FUZZ_EXAMPLES) examples per property;
# `make fuzz-long` is the same run for longer. CI runs `make asan`.
ASAN_DIR ?= .cache/asan
FUZZ_EXAMPLES ?= 500
# pytest-xdist workers of the fuzz run (each property runs whole on one of them)
FUZZ_WORKERS ?= 2
FUZZ_LONG_EXAMPLES ?= 20000
SANITIZER_LIBS = $(shell $${CC:-gcc} -print-file-name=libasan.so) $(shell $${CC:-gcc} -print-file-name=libubsan.so)
# leaks: the interpreter's own at exit are not ours; a report stops the process with a non-zero status.
# A huge allocation is a MemoryError, as in a normal build (bytes(n) of a huge n in the driver's own code).
# pytest captures at the sys level only, so a report on the process's stderr is seen.
ASAN_ENV = LD_PRELOAD="$(SANITIZER_LIBS)" PYTHONMALLOC=malloc \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# `make wheels`: one wheel per CPython 3.11+ on this machine (python3.X on PATH if it runs, else
# the interpreter manager's newest 3.X), each built in a virtual environment of its own under
# .cache/wheel-build from the sdist, repaired to manylinux, into $(DIST) with the sdist.
DIST ?= dist
PYTHONS ?= $(shell for v in 3.11 3.12 3.13 3.14; do \
	for p in $$(command -v python$$v) $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$$v.*/bin/python$$v 2>/dev/null | sort -rV); do \
		$$p -c "" 2>/dev/null && { echo $$p; break; }; done; done)

.PHONY: help venv build test test-node test-artifacts test-matrix test-alone test-killed-node test-unit test-integration profile bench bench-quick \
	cassandra-up cassandra-down cassandra-status cluster-up cluster-down cassandra-fetch \
	wheel wheels wheel-of pythons sdist typecheck clean asan asan-build fuzz-long

help:
	@echo "make profile     build, start the local Cassandra, profile the driver's default vs everything on (minutes): the answer first"
	@echo "make profile-full the full grid of patterns x factories, 3 rounds of $(PROFILE_OPS) ops, cProfile too (its progress lines say the time left)"
	@echo "make test        the whole suite (unit + integration, both implementations)"
	@echo "make test-matrix the fast path's tests on every supported driver release, from the wheel"
	@echo "make test-alone  the tests that want the machine to themselves (a killed node, measured shares), one at a time"
	@echo "make test-killed-node  the profiler's runs against a node of their own, killed (part of test-alone)"
	@echo "make bench       benchmarks at three depths, end to end pinned as the targets ask (16-23 min); bench-quick (3 min)"
	@echo "make asan        the extensions under AddressSanitizer + UBSan, and the fuzz suite run against them (minutes)"
	@echo "make fuzz-long   the same fuzz suite for longer: FUZZ_LONG_EXAMPLES=$(FUZZ_LONG_EXAMPLES) examples per property"
	@echo "make cassandra-up | cassandra-down | cassandra-status | cluster-up NODES=3 | cluster-down"
	@echo "make wheel       a binary wheel in dist/ (repaired to manylinux when auditwheel can)"
	@echo "make wheels      manylinux wheels for every CPython 3.11+ here, and the sdist, in dist/"

# uv installs into the environment (in seconds where pip takes minutes); pip stays in it for the
# commands and tests that use pip itself.
UV := $(BIN)/uv pip install -q --python $(PY)
$(DEPS): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip "uv>=0.5"
	$(UV) --upgrade "setuptools>=77" wheel "Cython>=3.0,<4" "$(DRIVER)"
	$(UV) --no-build-isolation -e ".[dev]"
	touch $@

venv: $(DEPS)

# Rebuilds the compiled modules in place when anything in ext/ changed (a no-op otherwise).
build: $(DEPS)
	$(PY) setup.py -q build_ext --inplace

# A node the tests start (or CI starts for them) compiles with the JIT's first tier only: it serves
# tests, not measurements, and the full JIT's optimising compiler costs more CPU over a test run than
# its faster code saves. A node `make profile` or `make bench` starts keeps the full JIT.
TEST_NODE_JVM_FLAGS ?= -XX:TieredStopAtLevel=1
test test-alone test-killed-node test-matrix test-unit test-integration asan test-node: export PYFACTORIES_NODE_JVM_FLAGS = $(TEST_NODE_JVM_FLAGS)

# The node the tests use, started ahead of them (CI starts it while `make build` compiles: the node's
# tool needs only the standard library).
test-node:
	$(PYTHON) -m profiling.node up

# --durations: the slowest tests, at the end of every run. TEST_WORKERS pytest-xdist workers: the
# tests on the node run in two lanes, each on one worker in order (tests/conftest.py), the rest shared;
# more workers than cores, as the lanes wait on the node, pip and the compiler as much as they compute.
DURATIONS ?= --durations=15
TEST_WORKERS ?= 4
test: build
	$(PY) -m pytest -m "not matrix and not alone" -n $(TEST_WORKERS) $(DURATIONS)

# The tests that want the machine to themselves, one at a time: a node of their own killed under every
# pattern of the profiler, and the profiler's measured shares of planted costs.
test-alone: build
	$(PY) -m pytest -m alone $(DURATIONS)

# The killed-node tests by themselves (they are part of test-alone).
test-killed-node: build
	$(PY) -m pytest -m killed_node $(DURATIONS)

# The wheel with every supported driver release, each in a fresh environment, against the real node.
test-matrix: build
	$(PY) -m pytest -m matrix $(DURATIONS)

test-unit: build
	$(PY) -m pytest -m "not integration and not slow and not matrix"

test-integration: build
	$(PY) -m pytest -m "integration and not matrix"

# The sanitizer build lives in its own copy of the tree, so the in-place build stays the optimised one;
# files are copied only when newer, so a second run rebuilds only what changed.
asan-build: build
	mkdir -p $(ASAN_DIR)
	{ git ls-files -co --exclude-standard; ls ext/*/*.c ext/_driver_version.pxi; } | sort -u \
		| while read -r f; do [ -f "$$f" ] && echo "$$f"; done | xargs cp -pu --parents -t $(ASAN_DIR)
	cd $(ASAN_DIR) && PYFACTORIES_SANITIZE=1 $(abspath $(PY)) setup.py -q build_ext --inplace

# What the stages after `make test` build, built beside it (CI does: `make test` leaves part of the two
# cores idle while it waits on the node): this CPython's wheel first (the wheel tests of `make test` wait
# for it), the sanitizer build, then the wheel of every other CPython, all where the later stages find them.
# Run it after `make build` (as CI does): two builds of the same tree at once would share its build/.
test-artifacts: build
	$(PY) -m tests.package.installed $(shell $(PY) -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
	$(MAKE) -s asan-build
	$(PY) -m tests.package.installed

asan: asan-build
	cd $(ASAN_DIR) && $(ASAN_ENV) PYFACTORIES_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
		$(abspath $(PY)) -m pytest tests/fuzz -p no:cacheprovider -q --capture=sys -n $(FUZZ_WORKERS) $(DURATIONS) $(FUZZ_ARGS)

fuzz-long: asan-build
	cd $(ASAN_DIR) && $(ASAN_ENV) PYFACTORIES_FUZZ_EXAMPLES=$(FUZZ_LONG_EXAMPLES) \
		$(abspath $(PY)) -m pytest tests/fuzz -p no:cacheprovider -q --capture=sys --hypothesis-show-statistics $(FUZZ_ARGS)

profile: build
	$(PY) -m profiling run --default $(if $(filter-out file,$(origin PROFILE_OPS)),-n $(PROFILE_OPS)) $(if $(filter-out file,$(origin REPEAT)),--repeat $(REPEAT)) $(if $(PATTERN),--pattern $(PATTERN)) $(if $(FACTORY),--factory $(FACTORY)) $(if $(CONNECTION),--connection $(CONNECTION)) $(PROFILE_ARGS)

.PHONY: profile-full
profile-full: build
	$(PY) -m profiling run --full -n $(PROFILE_OPS) --repeat $(REPEAT) $(if $(PATTERN),--pattern $(PATTERN)) $(if $(FACTORY),--factory $(FACTORY)) $(if $(CONNECTION),--connection $(CONNECTION)) $(PROFILE_ARGS)

bench: build
	$(PY) -m benchmarks.run --size full $(BENCH_ARGS)

bench-quick: build
	$(PY) -m benchmarks.run --size quick $(BENCH_ARGS)

cassandra-fetch: $(DEPS)
	$(PY) -m profiling.node fetch

cassandra-up: $(DEPS)
	$(PY) -m profiling.node up

cassandra-down: $(DEPS)
	$(PY) -m profiling.node down

cassandra-status: $(DEPS)
	$(PY) -m profiling.node status

cluster-up: $(DEPS)
	$(PY) -m profiling.node up --nodes $(NODES)

cluster-down: cassandra-down

# The Makefile's Python's wheel, from the source tree: the modules `make build` compiled are reused.
wheel: $(DEPS)
	rm -rf $(DIST)/raw-tree && mkdir -p $(DIST)/raw-tree
	$(PY) -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation -w $(DIST)/raw-tree .
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/auditwheel repair -w $(DIST) $(DIST)/raw-tree/pyfactories-*.whl \
		|| { echo "auditwheel could not repair the wheel: keeping the linux_* tag"; mv $(DIST)/raw-tree/*.whl $(DIST); }
	rm -rf $(DIST)/raw-tree
	ls $(DIST)

pythons:
	@for py in $(PYTHONS); do echo $$py; done

wheels: $(DEPS)
	@[ -n "$(strip $(PYTHONS))" ] || { echo "no CPython 3.11+ found"; exit 1; }
	$(MAKE) -s sdist DIST=$(DIST)
	set -e; for py in $(PYTHONS); do $(MAKE) -s wheel-of PYTHON=$$py DIST=$(DIST); done
	ls $(DIST)

# One CPython's wheel (PYTHON=/path/to/python3.X), built from the sdist in $(DIST) (made first if it is
# not there) by an environment of its own under .cache/wheel-build that has a C compiler and no Cython
# (the sdist carries the generated C), repaired to manylinux, into $(DIST); what that environment held
# is kept beside it (build-env-cpXY.txt).
WHEEL_BUILD_REQUIRES := "setuptools>=77" wheel "$(DEFAULT_DRIVER)"  # no Cython: the sdist has the C
wheel-of: $(DEPS)
	@[ -x "$(PYTHON)" ] || { echo "PYTHON=/path/to/python3.X: the CPython to build the wheel for"; exit 1; }
	ls $(DIST)/pyfactories-*.tar.gz >/dev/null 2>&1 || $(MAKE) -s sdist DIST=$(DIST)
	set -e; tag=$$($(PYTHON) -c 'import sys; print("cp%d%d" % sys.version_info[:2])'); \
		env=$(CURDIR)/.cache/wheel-build/$$tag; work=$(abspath $(DIST))/build-$$tag; rm -rf $$work && mkdir -p $$work/src; \
		tar -xzf $(DIST)/pyfactories-*.tar.gz -C $$work/src --strip-components=1; \
		[ -x $$env/bin/python ] || $(PYTHON) -m venv $$env; \
		$(BIN)/uv pip install -q --python $$env/bin/python --upgrade pip $(WHEEL_BUILD_REQUIRES); \
		$(BIN)/uv pip uninstall -q --python $$env/bin/python cython 2>/dev/null || true; \
		$$env/bin/python -m pip list --disable-pip-version-check > $(abspath $(DIST))/build-env-$$tag.txt; \
		(cd $$work/src && $$env/bin/python -m pip wheel -q --disable-pip-version-check --no-deps \
			--no-build-isolation -w ../raw .); \
		PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/auditwheel repair -w $(DIST) $$work/raw/pyfactories-*.whl; \
		rm -rf $$work

sdist: $(DEPS)
	rm -f $(DIST)/pyfactories-*.tar.gz
	$(PY) -m build --sdist --no-isolation --outdir $(DIST) .

typecheck: $(DEPS)
	$(BIN)/mypy --ignore-missing-imports tests/package/typing_user.py

clean:
	rm -rf build dist wheelhouse *.egg-info pyfactories/*/*.so ext/*/*.c
