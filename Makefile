# Thin wrapper around CMake. `make conform` and `make test` do all the set-up on Debian 12:
# install missing packages (tools/install-deps.sh), configure once, build incrementally, run.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps configure build conform test clean

all: build

deps:
	@sh tools/install-deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

conform: build
	@if [ -x $(BUILD)/bin/parity-conform ]; then $(BUILD)/bin/parity-conform; \
	else $(BUILD)/bin/parity-info; fi

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
