# Thin wrapper around CMake. `make conform` and `make test` do all the set-up on Debian 12:
# install missing packages (tools/install-deps.sh), configure once, build incrementally, run.
# Configure and build output goes to $(BUILD)/configure.log and $(BUILD)/build.log and is shown
# only when a step fails (VERBOSE=1 shows it always).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
PREFIX ?= /usr/local
ifeq ($(VERBOSE),1)
QUIET_TO =
else
QUIET_TO = > $(or $(2),$(BUILD))/$(1).log 2>&1 || { tail -n 60 $(or $(2),$(BUILD))/$(1).log; echo "make: $(1) failed; full log: $(or $(2),$(BUILD))/$(1).log"; exit 1; }
endif

.PHONY: all deps configure configure-conform build conform test bench install clean

all: build

deps:
	@sh tools/install-deps.sh

# A fresh build folder is configured once. `make conform` configures it with the CPU plugin's
# native kernel path only (PARITY_CPU_PATHS=native: the path this machine runs, a third of the
# plugin's compile); make build, test and bench widen such a folder to every path (the CPU tests
# run each one), unless CMAKE_FLAGS chose PARITY_CPU_PATHS.
CONFIGURE = test -f $(BUILD)/CMakeCache.txt || { echo "configuring $(BUILD)"; cmake -S . -B $(BUILD) $(CMAKE_FLAGS) $(1) $(call QUIET_TO,configure); }
CPU_PATHS_CHOSEN = $(findstring PARITY_CPU_PATHS,$(CMAKE_FLAGS))

configure: deps
	@mkdir -p $(BUILD)
	@$(call CONFIGURE,)
	@if [ -z "$(CPU_PATHS_CHOSEN)" ] && grep -qx 'PARITY_CPU_PATHS:STRING=native' $(BUILD)/CMakeCache.txt; then \
	  echo "configuring $(BUILD) with every CPU kernel path (make conform built the native one only)"; \
	  cmake $(BUILD) -DPARITY_CPU_PATHS=all $(call QUIET_TO,configure); fi

configure-conform: deps
	@mkdir -p $(BUILD)
	@$(call CONFIGURE,$(if $(CPU_PATHS_CHOSEN),,-DPARITY_CPU_PATHS=native))

build: configure
	@echo "building $(BUILD) (-j $(JOBS))"
	@cmake --build $(BUILD) -j $(JOBS) $(call QUIET_TO,build)

# only what the conformance run needs (the conform-ready target: parity-conform, parity-info and
# the plugins); make test builds the rest
conform: configure-conform
	@echo "building $(BUILD) for conformance (-j $(JOBS))"
	@cmake --build $(BUILD) -j $(JOBS) --target conform-ready $(call QUIET_TO,build)
	@if [ -x $(BUILD)/bin/parity-conform ]; then $(BUILD)/bin/parity-conform --jobs $(JOBS); \
	else $(BUILD)/bin/parity-info; fi

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Benchmarks beside their references (docs/benchmarks.md); installs the optional references
# (PyTorch, OpenBLAS) first, and runs without them (reported unavailable) where it cannot.
BENCH_ARGS ?= --json $(BUILD)/bench.json
bench: build
	@sh tools/install-deps.sh bench || echo "make: the optional bench references are missing; parity-bench reports them unavailable"
	$(BUILD)/bin/parity-bench $(BENCH_ARGS)

# The library, plugins and tools only (no test is built), in their own build folder.
INSTALL_BUILD ?= $(BUILD)-install
install: deps
	@mkdir -p $(INSTALL_BUILD)
	@test -f $(INSTALL_BUILD)/CMakeCache.txt || { echo "configuring $(INSTALL_BUILD)"; cmake -S . -B $(INSTALL_BUILD) $(CMAKE_FLAGS) -DPARITY_BUILD_TESTS=OFF $(call QUIET_TO,configure,$(INSTALL_BUILD)); }
	@echo "building $(INSTALL_BUILD) (-j $(JOBS)): library, plugins, tools"
	@cmake --build $(INSTALL_BUILD) -j $(JOBS) $(call QUIET_TO,build,$(INSTALL_BUILD))
	@cmake --install $(INSTALL_BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
