# plush — make | make run | make test | make test-slow | make check | make bench | make fuzz | make install | make clean
CC      ?= cc
CXX     ?= c++
CLANG   ?= clang
BUILD   ?= build
SAN     ?= 0
PREFIX  ?= /usr/local
# The release plush.pc reports (the CLI's --version says the same: src/cli/cli.h).
PLUSH_VERSION := $(shell sed -n 's/^\#define PLUSH_CLI_VERSION "\(.*\)"/\1/p' src/cli/cli.h)
DESTDIR ?=
FUZZ_SECONDS ?= 60

ifeq ($(origin CC),default)
CC := gcc
endif
ifeq ($(origin CXX),default)
CXX := g++
endif

WARN     := -Wall -Wextra -Wpedantic -Wshadow
CPPFLAGS := -Iinclude -Isrc -D_DEFAULT_SOURCE -MMD -MP
# cglm is header-only. Unaligned loads: plush passes float[16] arrays that live inside structs and arena
# blocks, which cglm's aligned SSE loads would fault on.
CGLM_CFLAGS := $(shell pkg-config --cflags cglm 2>/dev/null) -DCGLM_ALL_UNALIGNED
CPPFLAGS += $(CGLM_CFLAGS)
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 $(WARN)
LDLIBS   := -lm -lpthread -ldl
CPPFLAGS += -DPLUSH_PHYSICS_INSTALL_DIR='"$(PREFIX)/lib/plush"'
# Bullet is reached only through src/physics/bulletc*.cpp, built into a shared object that the library
# loads on first use (linking Bullet and libstdc++ into every process costs ~3 MB of resident memory).
CXXFLAGS ?= -O2 -g
CXXFLAGS += -std=c++17 -Wall -Wextra -Wshadow -fPIC -fvisibility=hidden
BULLET_CFLAGS = $(shell pkg-config --cflags bullet 2>/dev/null)
BULLET_LIBS   = $(shell pkg-config --libs bullet 2>/dev/null)

ifeq ($(SAN),1)
CFLAGS  := -std=c11 $(WARN) -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -Werror
CXXFLAGS := -std=c++17 -Wall -Wextra -Wshadow -fPIC -fvisibility=hidden -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -Werror
LDFLAGS += -fsanitize=address,undefined
endif

# The platform layer's Win32 half is mk/windows.mk's.
LIB_SRC  := $(sort $(filter-out src/core/platform_win32.c,$(shell find src -name '*.c' -not -path 'src/cli/*')))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(filter-out tests/slow/%,$(wildcard tests/*/test_*.c)))
# The full-size end-to-end runs (the demo bear's direct simulation, the long dances, Alicia from attach to
# export): minutes of CPU, so make test-slow runs them, not make test.
SLOW_SRC := $(sort $(wildcard tests/slow/test_*.c))
TEST_SUPPORT := $(sort $(wildcard tests/support/*.c))
BENCH_SRC := $(sort $(wildcard tools/bench/bench_*.c))
BENCH_CXX := $(sort $(wildcard tools/bench/bench_*.cpp))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
SUP_OBJ  := $(TEST_SUPPORT:%.c=$(BUILD)/obj/%.o)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
SLOW_TESTS := $(SLOW_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:tools/bench/%.c=$(BUILD)/bench/%) $(BENCH_CXX:tools/bench/%.cpp=$(BUILD)/bench/%)
LIB      := $(BUILD)/libplush.a
BIN      := $(BUILD)/plush
DEPS_OK  := $(BUILD)/.deps-ok
PHYS_CXX := $(sort $(wildcard src/physics/bulletc*.cpp))
PHYS_OBJ := $(PHYS_CXX:%.cpp=$(BUILD)/obj/%.o)
PHYS_SO  := $(if $(PHYS_CXX),$(BUILD)/libplush_physics.so)

CMOCKA_CFLAGS = $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS   = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

.PHONY: all run test test-slow check bench fuzz install clean deps
all: $(LIB) $(BIN) $(PHYS_SO)

# Missing packages: install them when root, otherwise say exactly what to run.
deps: $(DEPS_OK)
$(DEPS_OK): tools/install-deps.sh
	@mkdir -p $(@D)
	@if ! tools/install-deps.sh --check; then \
	  if [ "$$(id -u)" = 0 ]; then tools/install-deps.sh; \
	  else echo "plush: missing packages; run: sudo tools/install-deps.sh" >&2; exit 1; fi; fi
	@touch $@

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests $(CMOCKA_CFLAGS) $(CFLAGS) -c $< -o $@

# Seed mode rounds where the original rounds (docs/binding.md, the original method): no a*b+c fused into one
# rounding in its arithmetic, nor in the test's independent port of it.
$(BUILD)/obj/src/proxy/seed.o: CFLAGS += -ffp-contract=off
$(BUILD)/obj/tests/proxy/test_proxy_seed.o: CFLAGS += -ffp-contract=off

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# The physics plugin: bulletc.cpp (world, table), bulletc_rigid.cpp, bulletc_soft.cpp, one shared object.
$(BUILD)/obj/src/physics/%.o: src/physics/%.cpp | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(BULLET_CFLAGS) $(CXXFLAGS) -c $< -o $@

$(PHYS_SO): $(PHYS_OBJ)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -shared -o $@ $(PHYS_OBJ) $(LDFLAGS) $(BULLET_LIBS)

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(SUP_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(SUP_OBJ) $(LIB) $(CMOCKA_LIBS) $(LDLIBS)

$(BUILD)/bench/%: tools/bench/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# tools/bench/bake_replay.c: a run's bake replayed at every frame against the run's PLY frames (arguments in
# its header; not run by make bench). Built with the tests, as the benchmarks are.
BAKE_REPLAY := $(BUILD)/tools/bake_replay
$(BAKE_REPLAY): tools/bench/bake_replay.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# A C++ benchmark may drive Bullet directly (the reference the C binding is measured against).
$(BUILD)/bench/%: tools/bench/%.cpp $(LIB)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(BULLET_CFLAGS) $(filter-out -fPIC -fvisibility=hidden,$(CXXFLAGS)) -o $@ $< $(LIB) $(BULLET_LIBS) $(LDLIBS)

# The main job on the embedded plush bear.
run: all
	$(BIN) demo -o plush-demo

# Every suite runs from the project root (fixtures are read from ../shared/data/mmd), each one a target
# (make suite/cli/test_cli), TEST_JOBS of them at once; all run even when one fails, and a failing suite shows
# its log (tools/run-suite.sh). Suites that take longest start first, so none is left running alone at
# the end. The benchmarks are built (not run) with the tests, so that a change that breaks one fails CI.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TEST_FIRST := $(addprefix $(BUILD)/tests/,cli/test_cli_run cli/test_cli_bake scene/test_scene_direct cli/test_cli_sets \
              cli/test_cli_compare cli/test_cli_characters)
SUITES      := $(patsubst $(BUILD)/tests/%,suite/%,$(filter $(TESTS),$(TEST_FIRST)) $(filter-out $(TEST_FIRST),$(TESTS)))
SLOW_SUITES := $(patsubst $(BUILD)/tests/%,suite/%,$(SLOW_TESTS))
# A make that already runs with -j shares its job slots with the suites; otherwise they get TEST_JOBS.
SUITE_MAKE = $(MAKE) --no-print-directory -k $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(TEST_JOBS))

.PHONY: $(SUITES) $(SLOW_SUITES)
$(SUITES) $(SLOW_SUITES): suite/%: $(BUILD)/tests/% $(BIN) $(PHYS_SO)
	@tools/run-suite.sh $(BUILD)/tests/$* $(BIN) $(BUILD)/test-logs

test: $(TESTS) $(BIN) $(PHYS_SO) $(BENCHES) $(BAKE_REPLAY)
	@$(SUITE_MAKE) $(SUITES) || { echo "make test: a suite failed (its log is above)"; exit 1; }
	@echo "all tests passed"

test-slow: $(SLOW_TESTS) $(BIN) $(PHYS_SO)
	@$(SUITE_MAKE) $(SLOW_SUITES) || { echo "make test-slow: a suite failed (its log is above)"; exit 1; }
	@echo "all slow tests passed"

check:
	$(MAKE) BUILD=build/check SAN=1 test

bench: $(BENCHES) $(BIN) $(PHYS_SO)
	@set -e; for b in $(BENCHES); do PLUSH_BIN=$(BIN) $$b; done

# libFuzzer targets, each run for FUZZ_SECONDS, seeded from the shared files.
FUZZ_TARGETS := $(sort $(wildcard tools/fuzz/fuzz_*.c))
fuzz: | $(DEPS_OK)
	@mkdir -p build/fuzz
	@set -e; for f in $(FUZZ_TARGETS); do n=$$(basename $$f .c); \
	  $(CLANG) -std=c11 -g -O1 -Iinclude -Isrc -D_DEFAULT_SOURCE $(CGLM_CFLAGS) -fsanitize=fuzzer,address,undefined \
	    -o build/fuzz/$$n $$f $(LIB_SRC) -lm -lpthread -ldl; \
	  kind=$${n#fuzz_}; mkdir -p build/fuzz/corpus_$$kind; \
	  find ../shared/data/mmd -name "*.$$kind" -size -300k -exec cp {} build/fuzz/corpus_$$kind/ \; 2>/dev/null || true; \
	  cp tests/crashers/$$kind/* build/fuzz/corpus_$$kind/ 2>/dev/null || true; \
	  echo "== $$n for $(FUZZ_SECONDS) s"; \
	  build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -max_len=400000 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=build/fuzz/$$n- build/fuzz/corpus_$$kind; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/plush
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/plush
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libplush.a
	install -d $(DESTDIR)$(PREFIX)/lib/plush
	install -m 755 $(PHYS_SO) $(DESTDIR)$(PREFIX)/lib/plush/libplush_physics.so
	install -m 644 include/plush/*.h $(DESTDIR)$(PREFIX)/include/plush/
	install -d $(DESTDIR)$(PREFIX)/include/plush/sys
	install -m 644 include/plush/sys/*.h $(DESTDIR)$(PREFIX)/include/plush/sys/
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(PLUSH_VERSION)|' plush.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/plush.pc
	chmod 644 $(DESTDIR)$(PREFIX)/lib/pkgconfig/plush.pc

clean:
	rm -rf build

.SECONDARY:
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- The embedded plush demo -----------------------------------------------------------------------------
# tools/demo/gen_bear (src/demo's generator behind a main) writes the demo model, its shake motion and its
# rigid-eyes override into proxies/. They are deterministic outputs of the generator (the same bytes on
# every run), so they are built here and listed in .gitignore rather than committed (the model alone is
# ~3 MB).
GEN_BEAR     := $(BUILD)/tools/gen_bear
GEN_BEAR_OBJ := $(BUILD)/obj/tools/demo/gen_bear.o
DEMO_FILES   := proxies/plush_bear.pmx proxies/plush_bear_shake.vmd proxies/plush_bear.im2

all: $(DEMO_FILES)
test test-slow $(SUITES) $(SLOW_SUITES): $(GEN_BEAR) $(DEMO_FILES)
bench: $(GEN_BEAR) $(DEMO_FILES)

$(GEN_BEAR): $(GEN_BEAR_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(GEN_BEAR_OBJ) $(LIB) $(LDLIBS)

$(DEMO_FILES) &: $(GEN_BEAR)
	@mkdir -p proxies
	$(GEN_BEAR) -o proxies

# tools/stress/stress_motions writes the short hard motions (a spin, a jump, a head shake, arms crossing, a
# kneel, scene cuts) the characters test and tools/soak.sh --stress try the soft parts on, and a made-up dance (dance_1: the
# slow characters suite), into build/stress.
STRESS_GEN   := $(BUILD)/tools/stress_motions
STRESS_FILES := $(addprefix $(BUILD)/stress/,spin.vmd jump.vmd head_shake.vmd arms_cross.vmd kneel.vmd cut.vmd dance_1.vmd)
all: $(STRESS_FILES)
test test-slow $(SUITES) $(SLOW_SUITES): $(STRESS_FILES)

$(STRESS_GEN): $(BUILD)/obj/tools/stress/stress_motions.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(STRESS_FILES) &: $(STRESS_GEN)
	@mkdir -p $(BUILD)/stress
	$(STRESS_GEN) -o $(BUILD)/stress --dance 1

# ---- Windows -----------------------------------------------------------------------------------------------
# make windows | make test-windows | make dist-windows: the cross build with Debian's MinGW-w64 into
# build-windows/, its suites under Wine, the zip for users (mk/windows.mk; docs/windows.md).
.PHONY: windows windows-deps test-windows dist-windows
windows windows-deps test-windows dist-windows:
	@$(MAKE) --no-print-directory -f mk/windows.mk $@
