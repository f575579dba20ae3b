# raspcc — build, test, benchmark and fuzz. `make` builds bin/raspcc, bin/rasprun, bin/raspfut,
# bin/rasptestbed.
#
#   make            release binaries in bin/
#   make demo       compile and run an example end to end
#   make check      unit tests (plain and under ASan+UBSan), golden and differential tests, the
#                   testbed at n = 8, 16
#   make verify     long differential sweeps (not part of check)
#   make bench      the benchmark table (docs/benchmarks.md explains it)
#   make testbed    the theory testbed: the task suite at n = 8..256 (docs/testbed.md)
#   make fuzz       libFuzzer targets (clang), FUZZ_SECONDS each (default 60)
#
# Sources are found by folder: every .c under a stage folder belongs to the library; every
# tests/test_*.c is its own Check executable; every tools/X.c is the main of bin/X.

.DEFAULT_GOAL := all
CC      ?= cc
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN    := -Wall -Wextra -Werror -Wno-unused-function
OPT     ?= -O2 -g
PKGS    := check
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
BLAS_LIBS    := -llapacke -lopenblas -lm
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

STAGES  := support lexer parser ir codegen runtime fut verify testbed
LIB_SRC := $(filter-out %_main.c,$(foreach d,$(STAGES),$(wildcard $(d)/*.c)))
GEN_SRC := build/gen/lexer.c build/gen/parser.c build/gen/prelude.c
TOOLS   := raspcc rasprun raspfut rasptestbed
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
	$$(CC) $$($(1)_CFLAGS) $$^ $(BLAS_LIBS) -o $$@

build/$(1)/tests/%: build/$(1)/tests/%.o build/$(1)/libraspcc.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$($(1)_CFLAGS) $$^ $(CHECK_LIBS) $(BLAS_LIBS) -o $$@
endef

$(eval $(call mode_rules,rel,$(OPT)))
$(eval $(call mode_rules,san,-O1 -g $(SAN)))

.SECONDARY:
.PHONY: all deps demo check unit-tests golden corpus testbed-check verify bench testbed fuzz clean conformance
all: deps $(addprefix bin/,$(TOOLS))

bin/%: build/rel/bin/%
	@mkdir -p bin
	cp $< $@.tmp && mv -f $@.tmp $@

deps:
	@sh tools/install-deps.sh

build/gen/lexer.c build/gen/lexer.h: lexer/lexer.l
	@mkdir -p build/gen
	flex --header-file=build/gen/lexer.h -o build/gen/lexer.c $<

build/gen/parser.c build/gen/parser.h: parser/parser.y build/gen/lexer.h
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

unit-tests: deps $(addprefix build/rel/tests/,$(TESTS)) $(addprefix build/san/tests/,$(TESTS))
	@sh tests/run_unit.sh build/rel/tests $(TESTS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 sh tests/run_unit.sh build/san/tests $(TESTS)

golden: deps $(addprefix build/san/bin/,$(TOOLS))
	@sh tests/golden.sh build/san/bin

corpus: all
	@sh tests/corpus.sh bin

testbed-check: all build/san/bin/rasptestbed
	@sh tests/testbed.sh bin build/san/bin

check: all unit-tests golden corpus testbed-check

verify: all
	@sh tests/verify.sh bin

bench: all
	@sh bench/run.sh bin

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
build/fuzz/fuzz_compile: fuzz/fuzz_compile.c fuzz/progen.c fuzz/progen.h fuzz/fuzz_source.h build/fuzz/libraspcc.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer fuzz/fuzz_compile.c fuzz/progen.c build/fuzz/libraspcc.a $(BLAS_LIBS) -o $@
build/fuzz/progen_print: fuzz/progen_print.c fuzz/progen.c fuzz/progen.h
	@mkdir -p build/fuzz
	clang $(CSTD) $(WARN) -I. -O1 -g fuzz/progen_print.c fuzz/progen.c -o $@

fuzz: deps $(addprefix build/fuzz/,$(FUZZ_TARGETS)) build/fuzz/progen_print
	@sh fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

conformance: all
	python3 ../shared/conformance/run.py --mode eval --typed
	python3 ../shared/conformance/run.py --mode compiled --typed
	python3 ../shared/corpus/check.py --random 500

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
