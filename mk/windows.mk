# plush for x86_64 Windows, cross-built on Debian with MinGW-w64 (posix threads flavour): the Makefile's
# `make windows | make test-windows | make dist-windows` come here. Everything goes into build-windows/:
#   plush.exe            the command line program (static: no MinGW runtime DLL needed)
#   plush_physics.dll    Bullet behind plush's C ABI, loaded beside plush.exe on first use
#   libmeshoptimizer.dll optional (cage simplification), from the dependency prefix
#   libembree3.dll       optional (the binding's BVH search, the preview's rays), from the dependency prefix
#   libplush.a           the library, for a host program built with MinGW-w64
#   tests/...exe         the cmocka suites that run on Windows (test-windows runs them under Wine)
# The libraries come from Debian's source packages, built once per machine by tools/build-windows-deps.sh
# into WPREFIX (~/.cache/plush-windows unless PLUSH_WINDOWS_PREFIX says otherwise).
HOST    := x86_64-w64-mingw32
WCC     := $(HOST)-gcc-posix
WCXX    := $(HOST)-g++-posix
WAR     := $(HOST)-ar
WPREFIX ?= $(if $(PLUSH_WINDOWS_PREFIX),$(PLUSH_WINDOWS_PREFIX),$(HOME)/.cache/plush-windows)
WB      := build-windows
VERSION := $(shell sed -n 's/^\#define PLUSH_CLI_VERSION "\(.*\)"/\1/p' src/cli/cli.h)

WARN     := -Wall -Wextra -Wpedantic -Wshadow
# Unaligned cglm loads as on Linux; MinGW's own printf family (C99 formats %zu/%lld, and the same decimal
# rounding as glibc, where msvcrt's differs); no install folder for the physics plugin (beside the exe only).
CPPFLAGS := -Iinclude -Isrc -isystem $(WPREFIX)/include -DCGLM_ALL_UNALIGNED -D__USE_MINGW_ANSI_STDIO=1 \
            -D_WIN32_WINNT=0x0601 -D_USE_MATH_DEFINES -DPLUSH_PHYSICS_INSTALL_DIR='""' -MMD -MP
# -Wno-format: GCC checks a format(printf) attribute against msvcrt's dialect on this target, though plush
# links MinGW's C99 printf (above); the same strings are checked by the Linux build.
CFLAGS   := -O2 -g -std=c11 $(WARN) -Wno-format $(if $(filter 1,$(WERROR)),-Werror)
CXXFLAGS := -O2 -g -std=c++17 -Wall -Wextra -Wshadow -Wno-format $(if $(filter 1,$(WERROR)),-Werror)
# One executable with its runtime inside (libgcc, winpthreads), so the zip needs no MinGW DLLs.
LDFLAGS  := -static
LDLIBS   := -lm -lpthread -lshell32
BULLET_LIBS := -L$(WPREFIX)/lib -lBulletSoftBody -lBulletDynamics -lBulletCollision -lLinearMath

LIB_SRC := $(sort $(filter-out src/core/platform_posix.c,$(shell find src -name '*.c' -not -path 'src/cli/*')))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
PHYS_CXX := $(sort $(wildcard src/physics/bulletc*.cpp))
LIB_OBJ := $(LIB_SRC:%.c=$(WB)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(WB)/obj/%.o)
PHYS_OBJ := $(PHYS_CXX:%.cpp=$(WB)/obj/%.o)
LIB := $(WB)/libplush.a
BIN := $(WB)/plush.exe
PHYS_DLL := $(WB)/plush_physics.dll
MESHOPT_DLL := $(WB)/libmeshoptimizer.dll
EMBREE_DLL := $(WB)/libembree3.dll
STAMP := $(WPREFIX)/.stamp
DIST := $(WB)/plush-$(VERSION)-windows-x86_64

# The suites that run on Windows: all but those that drive a Linux plush or use a POSIX-only call
# (fork/posix_spawn, signals, rlimits, dlopen); test-windows names each one left out and why.
POSIX_ONLY := sys/wait\.h|spawn\.h|sys/resource\.h|signal\.h|dlfcn\.h|cli_run\.h|bake_long\.h|characters\.h
ALL_TESTS := $(sort $(filter-out tests/slow/%,$(wildcard tests/*/test_*.c)))
SKIP_SRC := $(sort $(shell grep -lE '\#include [<"](support/)?($(POSIX_ONLY))' $(ALL_TESTS) /dev/null 2>/dev/null) \
              tests/lib/test_symbols.c)
TEST_SRC := $(filter-out $(SKIP_SRC),$(ALL_TESTS))
SUP_SRC := $(filter-out tests/support/cli_run.c tests/support/report_read.c tests/support/characters.c,$(sort $(wildcard tests/support/*.c)))
SUP_OBJ := $(SUP_SRC:%.c=$(WB)/obj/%.o)
TESTS := $(TEST_SRC:tests/%.c=$(WB)/tests/%.exe)

.PHONY: windows windows-deps test-windows dist-windows
windows: $(LIB) $(BIN) $(PHYS_DLL) $(MESHOPT_DLL) $(EMBREE_DLL)

windows-deps: $(STAMP)
$(STAMP): tools/build-windows-deps.sh
	tools/build-windows-deps.sh $(WPREFIX)

$(WB)/obj/%.o: %.c | $(STAMP)
	@mkdir -p $(@D)
	$(WCC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(WB)/obj/tests/%.o: tests/%.c | $(STAMP)
	@mkdir -p $(@D)
	$(WCC) $(CPPFLAGS) -Itests $(CFLAGS) -c $< -o $@

# Seed mode rounds where the original rounds (docs/binding.md): no a*b+c fused into one rounding.
$(WB)/obj/src/proxy/seed.o $(WB)/obj/tests/proxy/test_proxy_seed.o: CFLAGS += -ffp-contract=off

$(WB)/obj/src/physics/%.o: src/physics/%.cpp | $(STAMP)
	@mkdir -p $(@D)
	$(WCXX) $(CPPFLAGS) -DPLUSH_BULLETC_BUILD -isystem $(WPREFIX)/include/bullet $(CXXFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(WAR) rcs $@ $^

# Only plush_bulletc_get leaves the DLL; the C++ and thread runtimes are linked into it.
$(PHYS_DLL): $(PHYS_OBJ)
	$(WCXX) -shared -static -o $@ $(PHYS_OBJ) $(BULLET_LIBS)

$(MESHOPT_DLL): $(STAMP)
	cp $(WPREFIX)/bin/libmeshoptimizer.dll $@

$(EMBREE_DLL): $(STAMP)
	cp $(WPREFIX)/bin/libembree3.dll $@

$(BIN): $(CLI_OBJ) $(LIB)
	$(WCC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(WB)/tests/%.exe: $(WB)/obj/tests/%.o $(SUP_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(WCC) $(LDFLAGS) -o $@ $< $(SUP_OBJ) $(LIB) $(WPREFIX)/lib/libcmocka-static.a $(LDLIBS)

# ---- under Wine ----------------------------------------------------------------------------------------
# A Wine prefix of its own (made on first use), no debug chatter. The suites run from the project root as on
# Linux (Wine maps it to Z:), with the physics DLL found through PLUSH_PHYSICS_LIB.
# Debian puts the 64-bit loader in /usr/lib/wine (the wine package adds /usr/bin/wine)
WINE ?= $(firstword $(wildcard /usr/bin/wine64 /usr/lib/wine/wine64) wine64)
# The CLI checks run the plush.exe unpacked from the zip, as a user gets it.
test-windows: windows dist-windows $(TESTS)
	@tools/test-windows.sh "$(WB)" "$(WINE)" "$(TESTS)" "$(SKIP_SRC)" "$(DIST).zip"

# ---- the zip a user unpacks ---------------------------------------------------------------------------
dist-windows: windows
	rm -rf $(DIST) $(DIST).zip
	mkdir -p $(DIST)
	cp $(BIN) $(PHYS_DLL) $(MESHOPT_DLL) $(EMBREE_DLL) $(DIST)/
	$(HOST)-strip $(DIST)/*.exe $(DIST)/*.dll
	cp tools/windows/README-windows.txt $(DIST)/README.txt
	cp tools/windows/plush-drop.bat $(DIST)/plush-drop.bat
	sed -i 's/$$/\r/' $(DIST)/README.txt $(DIST)/plush-drop.bat
	cd $(WB) && zip -q -r -X plush-$(VERSION)-windows-x86_64.zip plush-$(VERSION)-windows-x86_64
	@echo "wrote $(DIST).zip"

.SECONDARY:
-include $(shell find $(WB)/obj -name '*.d' 2>/dev/null)
