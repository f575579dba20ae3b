# raspcc — build, test, benchmark and fuzz. `make` builds bin/raspcc, bin/rasprun, bin/raspfut, bin/rasp,
# bin/raspsim, bin/rasptestbed.
#
#   make            release binaries in bin/
#   make demo       compile and run an example end to end
#   make check      unit tests (plain and under ASan+UBSan), golden and differential tests, the
#                   original REPL's transcripts through bin/rasp, the simulator programs
#                   against the mathematics (tests/simulator.sh), and the Python package
#                   against rasprun when python3-numpy and python3-torch are installed,
#                   the error flag (raspcc --error-flag) against rasprun's errors when
#                   python3-numpy is (tests/errflag.sh), programs that raise with the flag at
#                   max-len 6, 13, 30 (tests/errflag_sweep.sh), and the testbed at n = 8, 16
#   make verify     long differential sweeps (not part of check)
#   make bench      the benchmark table (docs/benchmarks.md explains it)
#   make experiments  the embedding-only training table (docs/experiments.md; ~30 min of CPU)
#   make testbed    the theory testbed: the task suite at n = 8..256 (docs/testbed.md)
#   make fuzz       libFuzzer targets (clang), FUZZ_SECONDS each (default 60)
#
# Sources are found by folder: every .c under a stage folder belongs to the library; every
# tests/test_*.c is its own Check executable; every tools/X.c is the main of bin/X.
#
# make install [PREFIX=/usr/local] [DESTDIR=...] installs the tools, libraspcc.a with its headers
# and raspcc.pc, the man pages, the prelude, the examples and the docs; make uninstall removes
# them; make install-check (part of check) uses an install as a user would.

.DEFAULT_GOAL := all

# Build dependencies before anything else, so that every target works from a fresh clone on a
# fresh Debian machine, under -j too. make reads build/deps.mk; when it is missing, or older than
# tools/install-deps.sh or the package database, make remakes it (the installer runs) and then
# starts over. Makefiles are remade before any goal, so no job of a parallel make runs before the
# packages are there, and the $(shell pkg-config ...) below are asked again after they are.
# (The flex and bison rules are grouped targets, &:, so one run makes both files under -j.)
ifeq ($(filter grouped-target,$(.FEATURES)),)
$(error raspcc needs GNU make 4.3 or later (grouped targets))
endif
ifneq ($(filter-out clean uninstall,$(or $(MAKECMDGOALS),all)),)
include build/deps.mk
endif
build/deps.mk: tools/install-deps.sh $(wildcard /var/lib/dpkg/status)
	@sh tools/install-deps.sh
	@mkdir -p build && echo '# tools/install-deps.sh found every build dependency installed.' >$@

CC      ?= cc
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN    := -Wall -Wextra -Werror -Wno-unused-function
OPT     ?= -O2 -g
PKGS    := check
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
# What every binary links: BLAS/LAPACK (runtime, fut), libpng (viz/heatmap.c, rasprun
# --trace-png) and libedit (repl/, the rasp REPL's line editing).
BLAS_LIBS    := -llapacke -lopenblas -lpng -lm -pthread
EDIT_LIBS    := -ledit
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

STAGES  := support lexer parser ir codegen runtime fut train verify viz driver repl sim testbed
LIB_SRC := $(filter-out %_main.c,$(foreach d,$(STAGES),$(wildcard $(d)/*.c)))
GEN_SRC := build/gen/lexer.c build/gen/parser.c build/gen/prelude.c
TOOLS   := raspcc rasprun raspfut rasp raspsim rasptestbed
TESTS   := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
INC     := -I. -Ibuild/gen -I/usr/include/openblas
GEN_HDRS := build/gen/lexer.h build/gen/parser.h

# Per-mode object trees: build/rel (release) and build/san (sanitizers).
define mode_rules
$(1)_CFLAGS := $(CSTD) $(WARN) $(INC) $(CHECK_CFLAGS) $(2)
$(1)_OBJ := $$(patsubst %.c,build/$(1)/%.o,$$(LIB_SRC)) $$(patsubst build/gen/%.c,build/$(1)/gen/%.o,$$(GEN_SRC))

build/$(1)/%.o: %.c $$(GEN_HDRS) | build/gen/parser.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$($(1)_CFLAGS) -MMD -MP -c $$< -o $$@

build/$(1)/gen/%.o: build/gen/%.c build/gen/parser.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(filter-out -Werror,$$($(1)_CFLAGS)) -Wno-unused-but-set-variable -Wno-sign-compare -Wno-unused-parameter -MMD -MP -c $$< -o $$@

build/$(1)/libraspcc.a: $$($(1)_OBJ)
	@rm -f $$@
	ar rcs $$@ $$^

build/$(1)/bin/%: build/$(1)/tools/%.o build/$(1)/libraspcc.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$($(1)_CFLAGS) $$^ $(BLAS_LIBS) $(EDIT_LIBS) -o $$@

build/$(1)/tests/%: build/$(1)/tests/%.o build/$(1)/libraspcc.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$($(1)_CFLAGS) $$^ $(CHECK_LIBS) $(BLAS_LIBS) $(EDIT_LIBS) -o $$@
endef

$(eval $(call mode_rules,rel,$(OPT)))
$(eval $(call mode_rules,san,-O1 -g $(SAN)))

.SECONDARY:
.PHONY: all deps python-deps demo check unit-tests unit-tests-rel unit-tests-san codegen-cycles golden corpus runtime-paths repl-transcripts simulator python errflag verify bench \
	bench-simulator testbed-check testbed fuzz clean conformance
all: deps $(addprefix bin/,$(TOOLS))

bin/%: build/rel/bin/%
	@mkdir -p bin
	cp $< $@.tmp && mv -f $@.tmp $@

deps:
	@sh tools/install-deps.sh

# Optional: NumPy and PyTorch for python/raspcc (tests/python.sh skips without them).
python-deps:
	@sh tools/install-deps.sh --python

build/gen/lexer.c build/gen/lexer.h &: lexer/lexer.l
	@mkdir -p build/gen
	flex --header-file=build/gen/lexer.h -o build/gen/lexer.c $<

build/gen/parser.c build/gen/parser.h &: parser/parser.y build/gen/lexer.h
	@mkdir -p build/gen
	bison -Wall --defines=build/gen/parser.h -o build/gen/parser.c $<

# The prelude, embedded as a byte array (od + awk: portable, no xxd, no escaping pitfalls).
build/gen/prelude.c: ir/prelude.rasp
	@mkdir -p build/gen
	od -An -v -tu1 $< | awk 'BEGIN { print "/* Generated from ir/prelude.rasp. */"; \
	    print "const char rasp_prelude_source[] = {" } \
	    { s = "   "; for (i = 1; i <= NF; i++) s = s " " $$i ","; print s } END { print "    0\n};" }' > $@

demo: all
	@sh tools/demo.sh

# Two targets, so that make -j runs the plain and the sanitized suites side by side. Side by side
# (and beside the other checks) each test runs slower, the sanitized ones 2-4x slower still: the
# per-test timeouts (tcase_set_timeout), a guard against hangs, scale by 2 and by 6.
unit-tests: unit-tests-rel unit-tests-san
unit-tests-rel: deps $(addprefix build/rel/tests/,$(TESTS))
	@CK_TIMEOUT_MULTIPLIER=2 sh tests/run_unit.sh build/rel/tests $(TESTS)
unit-tests-san: deps $(addprefix build/san/tests/,$(TESTS))
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CK_TIMEOUT_MULTIPLIER=6 sh tests/run_unit.sh build/san/tests $(TESTS)

# Data flows one way through the compiler: no file of codegen/ calls a later pass.
codegen-cycles:
	@python3 tests/codegen_cycles.py codegen

golden: deps $(addprefix build/san/bin/,$(TOOLS))
	@sh tests/golden.sh build/san/bin

corpus: all
	@sh tests/corpus.sh bin

# The runtime's attention and MLP paths, run under the sanitizers, on programs written to reach them.
runtime-paths: all build/san/bin/rasprun
	@sh tests/runtime_paths.sh bin build/san/bin

testbed-check: all build/san/bin/rasptestbed
	@sh tests/testbed.sh bin build/san/bin

# The original REPL's transcripts through bin/rasp (under the sanitizers), when ../shared is there.
repl-transcripts: deps build/san/bin/rasp build/san/bin/rasprun
	@sh tests/repl.sh build/san/bin

simulator: all
	@sh tests/simulator.sh bin

python: all
	@sh tests/python.sh bin

errflag: all
	@sh tests/errflag.sh bin
	@sh tests/errflag_sweep.sh bin

check: all unit-tests golden corpus repl-transcripts simulator python errflag testbed-check codegen-cycles runtime-paths

verify: all
	@sh tests/verify.sh bin

bench: all
	@sh bench/run.sh bin
	@sh bench/torch.sh bin
	@sh bench/simulator.sh bin

bench-simulator: all
	@sh bench/simulator.sh bin

.PHONY: experiments
experiments: all
	@sh bench/experiments.sh bin

# The theory testbed (docs/testbed.md): TESTBED_N=8,16 for a subset, TESTBED_JOBS (task, n) at
# once, TESTBED_ARGS for more flags (bin/rasptestbed --help).
TESTBED_N ?= 8,16,32,64,128,256
TESTBED_JOBS ?= 2
testbed: all
	@sh tools/install-deps.sh gnuplot-nox
	OPENBLAS_NUM_THREADS=1 bin/rasptestbed --n $(TESTBED_N) --jobs $(TESTBED_JOBS) --out build/testbed $(TESTBED_ARGS)

FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_CFLAGS  := $(CSTD) $(INC) -g -O1 -fsanitize=fuzzer-no-link,address,undefined
FUZZ_OBJ     := $(patsubst %.c,build/fuzzobj/%.o,$(LIB_SRC)) $(patsubst build/gen/%.c,build/fuzzobj/gen/%.o,$(GEN_SRC))
build/fuzzobj/gen/%.o: build/gen/%.c build/gen/parser.h
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build/fuzzobj/%.o: %.c $(GEN_HDRS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build/fuzz/libraspcc.a: $(FUZZ_OBJ)
	@mkdir -p build/fuzz
	@rm -f $@
	ar rcs $@ $^
build/fuzz/%: fuzz/%.c build/fuzz/libraspcc.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $< build/fuzz/libraspcc.a $(BLAS_LIBS) -o $@
# fuzz_compile generates its programs with fuzz/progen.c; progen_print shows the program of an input.
build/fuzz/fuzz_compile: fuzz/fuzz_compile.c fuzz/progen.c fuzz/progen_real.c fuzz/progen.h fuzz/fuzz_source.h build/fuzz/libraspcc.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer fuzz/fuzz_compile.c fuzz/progen.c fuzz/progen_real.c build/fuzz/libraspcc.a $(BLAS_LIBS) -o $@
build/fuzz/fuzz_compile_real: fuzz/fuzz_compile_real.c fuzz/fuzz_compile.c fuzz/progen.c fuzz/progen_real.c fuzz/progen.h fuzz/fuzz_source.h build/fuzz/libraspcc.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer fuzz/fuzz_compile_real.c fuzz/progen.c fuzz/progen_real.c build/fuzz/libraspcc.a $(BLAS_LIBS) -o $@
build/fuzz/progen_print: fuzz/progen_print.c fuzz/progen.c fuzz/progen_real.c fuzz/progen.h
	@mkdir -p build/fuzz
	clang $(CSTD) $(WARN) -I. -O1 -g fuzz/progen_print.c fuzz/progen.c fuzz/progen_real.c -o $@

fuzz: deps $(addprefix build/fuzz/,$(FUZZ_TARGETS)) build/fuzz/progen_print
	@sh fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

conformance: all
	python3 ../shared/conformance/run.py --mode eval --typed
	python3 ../shared/conformance/run.py --mode compiled --typed
	python3 ../shared/corpus/check.py --random 500

# ---- install -------------------------------------------------------------------------------
# GNU directory names. DESTDIR stages an install for a package: the files go under
# DESTDIR/PREFIX and raspcc.pc still says PREFIX.
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
DATADIR      ?= $(PREFIX)/share
MANDIR       ?= $(DATADIR)/man
DOCDIR       ?= $(DATADIR)/doc/raspcc
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
VERSION      := $(shell sed -n 's/^\#define RASPCC_VERSION "\(.*\)"/\1/p' tools/raspcc.c)
# Every header of a stage is public but those private to their stage; installed under
# include/raspcc/ by stage, so `#include "runtime/model.h"` works as it does here.
PRIVATE_HEADERS := %internal.h parser/ast_build.h fut/layout.h
# train/layers.h includes its declarations once per precision from train/layers_api.inc.
PUBLIC_HEADERS  := $(filter-out $(PRIVATE_HEADERS),$(foreach d,$(STAGES),$(wildcard $(d)/*.h))) train/layers_api.inc
MAN_PAGES       := $(wildcard man/*.1)
# raspcc.pc names its directories from ${prefix} where it can (pkg-config --define-prefix).
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

install: all build/rel/libraspcc.a
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(PKGCONFIGDIR)" "$(DESTDIR)$(MANDIR)/man1" \
	    "$(DESTDIR)$(INCLUDEDIR)/raspcc" "$(DESTDIR)$(DATADIR)/raspcc/examples" "$(DESTDIR)$(DOCDIR)"
	install -m 755 $(addprefix bin/,$(TOOLS)) "$(DESTDIR)$(BINDIR)"
	install -m 644 build/rel/libraspcc.a "$(DESTDIR)$(LIBDIR)"
	for h in $(PUBLIC_HEADERS); do install -D -m 644 $$h "$(DESTDIR)$(INCLUDEDIR)/raspcc/$$h" || exit 1; done
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS@|$(BLAS_LIBS)|' tools/raspcc.pc.in >"$(DESTDIR)$(PKGCONFIGDIR)/raspcc.pc"
	install -m 644 $(MAN_PAGES) "$(DESTDIR)$(MANDIR)/man1"
	install -m 644 ir/prelude.rasp "$(DESTDIR)$(DATADIR)/raspcc"
	install -m 644 rasp_examples/*.rasp "$(DESTDIR)$(DATADIR)/raspcc/examples"
	find examples -type f ! -path '*/__pycache__/*' | while read -r f; do \
	    mode=644; [ -x "$$f" ] && mode=755; \
	    install -D -m $$mode "$$f" "$(DESTDIR)$(DATADIR)/raspcc/$$f" || exit 1; done
	install -m 644 README.md docs/*.md "$(DESTDIR)$(DOCDIR)"

uninstall:
	for t in $(TOOLS); do rm -f "$(DESTDIR)$(BINDIR)/$$t"; done
	for p in $(notdir $(MAN_PAGES)); do rm -f "$(DESTDIR)$(MANDIR)/man1/$$p"; done
	rm -f "$(DESTDIR)$(LIBDIR)/libraspcc.a" "$(DESTDIR)$(PKGCONFIGDIR)/raspcc.pc"
	rm -rf "$(DESTDIR)$(INCLUDEDIR)/raspcc" "$(DESTDIR)$(DATADIR)/raspcc" "$(DESTDIR)$(DOCDIR)"

# make install into temporary directories, then use what it installed as a user would
# (tests/install_check.sh). The recipe calls make, so it gets the jobserver.
.PHONY: install uninstall install-check
check: install-check
install-check: all
	@sh tests/install_check.sh "$(MAKE)"

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
