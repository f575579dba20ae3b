/* libFuzzer target: fuzz_compile on real-valued programs only (fuzz/progen_real.c; what
 * FUZZ_COMPILE_REALS=1 does to fuzz_compile), a target of its own so that `make fuzz` runs it and
 * its corpus (fuzz/corpus/fuzz_compile_real) stays apart: the same bytes make other programs. */
#define FUZZ_COMPILE_REALS_ONLY 1
#include "fuzz/fuzz_compile.c"
