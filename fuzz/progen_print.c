/* progen_print: the RASP program fuzz_compile generates from a fuzzer input, as a .rasp file.
 *
 *   build/fuzz/progen_print [-p] [-r] FILE...    (no FILE: standard input)
 *
 * Prints, per file, the header line "# output: out  vocab: V  max-len: N  tokens: str|int" and
 * the program (compile it with raspcc FILE.rasp -o m.bin --output out --vocab V --max-len N);
 * with -r the real-valued program of FUZZ_COMPILE_REALS ("# output: out  range: LO..HI  max-len: N
 * mlp: relu|gated": --range LO..HI, and --mlp gated for gated).
 * -p adds a comment line listing the generator's productions the program uses. Running
 * build/fuzz/fuzz_compile FILE replays the input and prints the disagreement itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/progen.h"

static int print_one(FILE *in, const char *name, bool prods, bool real, bool several) {
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) return 1;
    size_t k;
    while ((k = fread(buf + n, 1, cap - n, in)) > 0) {
        n += k;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b) { free(buf); return 1; }
            buf = b;
        }
    }
    ProgenProgram p;
    if (!(real ? progen_generate_real(buf, n, &p) : progen_generate(buf, n, &p))) {
        free(buf);
        fprintf(stderr, "progen_print: out of memory\n");
        return 1;
    }
    if (several) printf("# ---- %s\n", name);
    progen_print_header(stdout, &p);
    if (prods) {
        printf("# productions:");
        for (int i = 0; i < PP_COUNT; i++)
            if (p.prods & ((uint64_t)1 << i)) printf(" %s", progen_prod_name((ProgenProd)i));
        printf("  (%zu of %zu bytes used; %zu statements)\n", p.bytes_used, n, p.statements);
    }
    fputs(p.text, stdout);
    progen_free(&p);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    bool prods = false, real = false;
    int first = 1;
    for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
        if (strcmp(argv[first], "-p") == 0) prods = true;
        else if (strcmp(argv[first], "-r") == 0) real = true;
        else {
            fprintf(stderr, "usage: %s [-p] [-r] [FILE...]\n", argv[0]);
            return 2;
        }
    }
    if (first >= argc) return print_one(stdin, "<stdin>", prods, real, false);
    int rc = 0;
    for (int i = first; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "progen_print: cannot open %s\n", argv[i]);
            rc = 1;
            continue;
        }
        rc |= print_one(f, argv[i], prods, real, argc - first > 1);
        fclose(f);
    }
    return rc;
}
