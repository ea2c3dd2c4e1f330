# mcuflow: `make` builds everything into .venv, `make test` runs every suite, `make demo` runs
# the demo. On a fresh Debian machine both install what is missing (apt-get, pip).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
BUILD := build/host
JOBS ?= $(shell nproc)
APT_PACKAGES := gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm \
                libgtest-dev cmake ninja-build
# Only the tests need these: chromium renders the HTML reports headless (tests/python/test_html_report.py).
TEST_APT_PACKAGES := chromium
PY_PACKAGES := torch==2.13.0 numpy pytest pytest-xdist pybind11 scikit-build-core scikit-learn
# PT2E (mcuflow.quantizer): torchao's own requirements would move torch; it needs none beyond it.
PY_NO_DEPS_PACKAGES := torchao==0.18.0
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps python host test test-cpp test-python test-sanitize fuzz demo clean

all: python host

# --- dependencies -----------------------------------------------------------------------
# Installs those of the Debian packages $(1) that are missing.
apt_install_missing = @missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "apt-get install:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    --no-install-recommends $$missing >/dev/null; fi

$(BUILD)/.apt-done:
	$(call apt_install_missing,$(APT_PACKAGES))
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/.apt-test-done:
	$(call apt_install_missing,$(TEST_APT_PACKAGES))
	@mkdir -p $(BUILD) && touch $@

$(VENV)/.deps-done: Makefile
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check $(PY_PACKAGES)
	$(PIP) install -q --disable-pip-version-check --no-deps $(PY_NO_DEPS_PACKAGES)
	@touch $@

deps: $(BUILD)/.apt-done $(VENV)/.deps-done

# --- builds -----------------------------------------------------------------------------
python: deps
	$(PIP) install -q --disable-pip-version-check --no-build-isolation -e .

host: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# --- tests ------------------------------------------------------------------------------
test: all test-cpp test-sanitize test-python

test-cpp: host
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The verifier and runtime suites again under AddressSanitizer + UndefinedBehaviorSanitizer.
test-sanitize: deps
	cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMCUFLOW_SANITIZE=ON >/dev/null
	cmake --build build/sanitize -j $(JOBS) --target mcuflow_runtime_tests
	ctest --test-dir build/sanitize --output-on-failure -R runtime

# MCUFLOW_REQUIRE_CHROMIUM: the render test fails instead of skipping when chromium is missing.
test-python: python $(BUILD)/.apt-test-done
	MCUFLOW_REQUIRE_CHROMIUM=1 $(PY) -m pytest -q -n $(JOBS) tests/python tests/firmware

# libFuzzer over load + bind + run for FUZZ_SECONDS, from a corpus of real programs of every tier;
# findings (inputs that crash, hang or break an invariant) land in build/fuzz/findings/.
FUZZ_SECONDS ?= 600
fuzz: python
	$(call apt_install_missing,clang libclang-rt-dev)
	CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCUFLOW_FUZZ=ON >/dev/null
	cmake --build build/fuzz -j $(JOBS) --target mcuflow_fuzz_program
	$(PY) tests/fuzz/make_corpus.py build/fuzz/corpus
	mkdir -p build/fuzz/findings
	build/fuzz/tests/fuzz/mcuflow_fuzz_program -dict=tests/fuzz/program.dict -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -print_final_stats=1 -artifact_prefix=build/fuzz/findings/ build/fuzz/corpus

demo: all
	$(PY) examples/digits/demo.py

clean:
	rm -rf build
