/* libFuzzer target for the compiler: a structure-aware, typed, exact differential fuzzer.
 *
 * The fuzzer's bytes drive a generator of RASP programs (fuzz/progen.h): compile flags (token
 * type, vocabulary, max-len) and a well-formed program of 1..10 statements binding `out`, built
 * from productions modelled on what RASP users write. The program is elaborated (with a work
 * budget) and compiled (codegen/codegen.h); a compile error is fine, the compiler may refuse.
 * A compiled model is run (runtime/forward.h model_run) against the reference evaluator
 * (ir/eval.h ir_eval) through verify/verify.h on every input of lengths 1..L over the
 * vocabulary (L as large as keeps that under EXHAUSTIVE_LIMIT inputs, fewer for a large model:
 * CHECK_WORK / its weights, at least MIN_INPUTS) and on a few seeded random longer inputs up to
 * max-len, compared exactly and typed (verify_same_atom with the model's
 * verify_model_bound): 1, 1.0 and True differ, floats bit for bit. Both raising is agreement;
 * one raising while the other answers is a finding. The model is also written and read back
 * (runtime/model_io.h, what raspcc -o and rasprun do) and the copy checked on random inputs.
 *
 * A finding (outputs differ, one side raises, the model cannot tokenize an input of its own
 * vocabulary, the model cannot be written or read back, a compile slower than
 * FUZZ_COMPILE_SLOW_MS) prints a block to stderr:
 *
 *   ==== fuzz_compile finding: KIND ====
 *   # output: out  vocab: V  max-len: N  tokens: str|int
 *   # input [...]: model [...], reference [...]
 *   PROGRAM
 *   ==== end of finding (signature: ...) ====
 *
 * (the lines between the markers are a ready .rasp file) and aborts, so libFuzzer keeps the
 * input. Crashes, undefined behaviour (UBSan halts on the first report), leaks, hangs and memory
 * blow-ups are libFuzzer's own findings; replay an input with build/fuzz/fuzz_compile FILE, or
 * print its program with build/fuzz/progen_print FILE.
 *
 * Environment:
 *   FUZZ_COMPILE_PRINT=1     print every generated program (and whether it compiled) to stderr
 *   FUZZ_COMPILE_STATS=1     at exit, counts: programs, elaborated, compiled, inputs compared,
 *                            the most frequent refusals, the productions of compiled programs
 *   FUZZ_COMPILE_SLOW_MS=N   a compile slower than N ms is a finding (default 5000: the
 *                            sanitized build runs 5-10x slower than a release build)
 *   FUZZ_COMPILE_KEEP_GOING=1  print findings without aborting (one per program; the first three
 *                            of each signature: kind and normalized messages), and at exit the
 *                            signatures with their counts; to triage a corpus
 *                            (build/fuzz/fuzz_compile DIR/ *) or fuzz past known findings;
 *                            undefined behaviour is then a finding too instead of a halt
 *                            (memory errors still end the process: restart past them)
 *   FUZZ_COMPILE_FINDINGS_DIR=DIR  with KEEP_GOING: save those inputs there, named by signature
 *   FUZZ_COMPILE_REALS=1     real-valued programs instead (fuzz/progen_real.c: tokens_float with
 *                            --range, ReLU or gated MLPs; fuzz_compile_real is this target with
 *                            it always on, and its own corpus, since the same bytes make other
 *                            programs): each model runs on REAL_INPUTS random inputs
 *                            (verify_random_input: range ends, zeros, short decimals) and must
 *                            agree within its stated bound; a refusal within a margin is allowed
 *   FUZZ_COMPILE_SKIP=P,...  do not compile programs matching these known findings' patterns
 *                            (to look for other findings while one is unfixed); patterns:
 *                              indices_output  the output is the bare `indices` s-op (or a
 *                                              copy of it through select(indices, indices, ==)) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/codegen.h"
#include "fuzz/fuzz_source.h"
#include "fuzz/progen.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "runtime/forward.h"
#include "runtime/model_io.h"
#include "verify/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
const char *__ubsan_default_options(void);
void __ubsan_on_report(void);
void __ubsan_get_current_report_data(const char **kind, const char **message, const char **file, unsigned *line,
                                     unsigned *col, char **addr);

/* Undefined behaviour in the compiler is a finding too: stop at the first report (as make
 * check's sanitized build does) instead of printing it and going on unnoticed; with
 * FUZZ_COMPILE_KEEP_GOING, report it as a finding (__ubsan_on_report) and go on (UBSan reports
 * each source location once per process). */
const char *__ubsan_default_options(void) {
    const char *e = getenv("FUZZ_COMPILE_KEEP_GOING");
    return e && *e && *e != '0' ? "halt_on_error=0:print_stacktrace=1" : "halt_on_error=1:print_stacktrace=1";
}

enum {
    EXHAUSTIVE_LIMIT = 160, /* inputs of the exhaustive phase */
    MIN_INPUTS = 12,        /* ... at least, however large the model */
    RANDOM_INPUTS = 6,      /* random inputs longer than the exhaustive length */
    REAL_INPUTS = 60,       /* random inputs of a real-valued model */
    CHECK_WORK = 100000000, /* inputs x weights per program (keeps a check to a few ms) */
    WRITE_LIMIT = 4000000,  /* weights of the largest model written and read back */
    MAX_REASONS = 48,
};

static bool print_programs, print_stats, keep_going, reals;
static bool found; /* a finding on the current program (keep_going) */
static bool skip_indices_output;
static double slow_ms = 5000;

typedef struct Reason {
    char text[72];
    size_t count;
} Reason;

static struct {
    size_t findings, programs, skipped, elaborated, compiled, no_workspace, inputs, errors_agreed;
    size_t prod_compiled[PP_COUNT], prod_generated[PP_COUNT];
    double compile_ms, check_ms, max_compile_ms;
    Reason reasons[MAX_REASONS];
    size_t n_reasons, other_reasons;
} st;

typedef struct Signature {
    char text[400];
    size_t count;
} Signature;
static Signature sigs[128];
static size_t n_sigs;

static const uint8_t *cur_data; /* the input being run */
static size_t cur_size;
static const char *findings_dir;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* A refusal's message with its quoted names and numbers dropped, so that refusals group. */
static void count_reason(const char *msg) {
    char key[72];
    size_t k = 0;
    bool quoted = false;
    for (const char *c = msg; *c && k + 1 < sizeof key; c++) {
        if (*c == '\'') { quoted = !quoted; if (quoted) key[k++] = '_'; continue; }
        if (quoted || (*c >= '0' && *c <= '9')) continue;
        key[k++] = *c;
    }
    key[k] = '\0';
    for (size_t i = 0; i < st.n_reasons; i++)
        if (strcmp(st.reasons[i].text, key) == 0) { st.reasons[i].count++; return; }
    if (st.n_reasons == MAX_REASONS) { st.other_reasons++; return; }
    memcpy(st.reasons[st.n_reasons].text, key, k + 1);
    st.reasons[st.n_reasons++].count = 1;
}

static int by_count(const void *a, const void *b) {
    size_t x = ((const Reason *)a)->count, y = ((const Reason *)b)->count;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void report_stats(void) {
    fprintf(stderr, "fuzz_compile: %zu findings, %zu programs, %zu skipped (known), %zu elaborated, %zu compiled (%zu without workspace), "
            "%zu inputs compared (%zu errors agreed); compile %.1f ms avg (max %.0f), check %.2f ms avg\n",
            st.findings, st.programs, st.skipped, st.elaborated, st.compiled, st.no_workspace, st.inputs, st.errors_agreed,
            st.elaborated ? st.compile_ms / (double)st.elaborated : 0, st.max_compile_ms,
            st.compiled ? st.check_ms / (double)st.compiled : 0);
    qsort(st.reasons, st.n_reasons, sizeof st.reasons[0], by_count);
    for (size_t i = 0; i < st.n_reasons && i < 25; i++)
        fprintf(stderr, "  refused %6zu  %s\n", st.reasons[i].count, st.reasons[i].text);
    if (st.other_reasons) fprintf(stderr, "  refused %6zu  (other)\n", st.other_reasons);
    for (size_t i = 0; i < n_sigs; i++) fprintf(stderr, "  finding %6zu  %s\n", sigs[i].count, sigs[i].text);
    if (!print_stats) return;
    fprintf(stderr, "  production: compiled/generated\n");
    for (int i = 0; i < PP_COUNT; i++)
        fprintf(stderr, "    %-15s %6zu / %6zu\n", progen_prod_name((ProgenProd)i), st.prod_compiled[i],
                st.prod_generated[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *e;
    print_programs = (e = getenv("FUZZ_COMPILE_PRINT")) && *e && *e != '0';
    print_stats = (e = getenv("FUZZ_COMPILE_STATS")) && *e && *e != '0';
    keep_going = (e = getenv("FUZZ_COMPILE_KEEP_GOING")) && *e && *e != '0';
#ifdef FUZZ_COMPILE_REALS_ONLY
    reals = true; /* fuzz_compile_real.c */
#else
    reals = (e = getenv("FUZZ_COMPILE_REALS")) && *e && *e != '0';
#endif
    if ((e = getenv("FUZZ_COMPILE_SLOW_MS")) && atof(e) > 0) slow_ms = atof(e);
    findings_dir = getenv("FUZZ_COMPILE_FINDINGS_DIR");
    if ((e = getenv("FUZZ_COMPILE_SKIP"))) skip_indices_output = strstr(e, "indices_output") != NULL;
    if (print_stats || keep_going) atexit(report_stats);
    return 0;
}

/* A message without what varies between instances of one cause: a leading FILE:LINE:COL:,
 * quoted names and strings, numbers. */
static void normalize(const char *msg, char *out, size_t size) {
    size_t k = 0;
    const char *c = msg;
    for (const char *q = c; *q; q++) { /* past FILE:LINE:COL: */
        int line, col, used = 0;
        if (*q == ':' && sscanf(q, ":%d:%d: %n", &line, &col, &used) == 2 && used) { c = q + used; break; }
    }
    char quote = 0;
    for (; *c && k + 1 < size; c++) {
        if (quote) { if (*c == quote) quote = 0; continue; }
        if (strncmp(c, "s-op ", 5) == 0) { /* s-op NAME */
            memcpy(out + k, "s-op _", 6 < size - k - 1 ? 6 : size - k - 1);
            k += 6 < size - k - 1 ? 6 : size - k - 1;
            c += 5;
            while (c[1] && c[1] != ' ') c++;
            continue;
        }
        if (*c == '\'' || *c == '"') { quote = *c; out[k++] = '_'; continue; }
        if (*c >= '0' && *c <= '9') { if (!k || out[k - 1] != '#') out[k++] = '#'; continue; }
        out[k++] = *c;
    }
    out[k] = '\0';
}

/* What identifies a finding's cause, as well as can be told from outside: its kind, the
 * normalized messages, the kinds of the first atoms that differ. */
static void signature(const char *kind, const VerifyOutcome *o, const char *detail, char *sig, size_t size) {
    char a[160] = "", b[160] = "";
    if (o && !o->model_ok) normalize(o->model_err, a, sizeof a);
    if (o && !o->ref_ok) normalize(o->ref_err, b, sizeof b);
    if (o && o->model_ok && o->ref_ok) {
        snprintf(a, sizeof a, "%s", value_kind_name(o->model_out[o->position].kind));
        snprintf(b, sizeof b, "%s", value_kind_name(o->ref_out[o->position].kind));
    }
    if (!o && detail) normalize(detail, a, sizeof a);
    snprintf(sig, size, "%s | %s | %s", kind, a, b);
}

/* Saves the input under findings_dir, named by its signature. */
static void save_input(const char *sig, size_t nth) {
    char name[120];
    size_t k = 0;
    for (const char *c = sig; *c && k + 1 < 80; c++) {
        char ch = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (ok) name[k++] = ch;
        else if (k && name[k - 1] != '_') name[k++] = '_';
    }
    name[k] = '\0';
    char path[1024];
    snprintf(path, sizeof path, "%s/finding-%s-%zu", findings_dir, name, nth);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(cur_data, 1, cur_size, f);
    fclose(f);
}

/* Reports a finding: aborts, or with FUZZ_COMPILE_KEEP_GOING prints the first few instances of
 * each signature (and saves their inputs in FUZZ_COMPILE_FINDINGS_DIR). */
static void finding(const ProgenProgram *p, const char *kind, const VerifyOutcome *o, const char *detail) {
    st.findings++;
    found = true;
    size_t nth = 0;
    char sig[400];
    signature(kind, o, detail, sig, sizeof sig);
    if (keep_going) {
        size_t i = 0;
        while (i < n_sigs && strcmp(sigs[i].text, sig) != 0) i++;
        if (i == n_sigs && n_sigs < sizeof sigs / sizeof *sigs) snprintf(sigs[n_sigs++].text, sizeof sigs[0].text, "%s", sig);
        if (i < n_sigs) nth = ++sigs[i].count;
        if (nth > 3) return;
        if (findings_dir) save_input(sig, nth);
    }
    fprintf(stderr, "\n==== fuzz_compile finding: %s ====\n", kind);
    progen_print_header(stderr, p);
    if (o) {
        fprintf(stderr, "# ");
        verify_print_report(stderr, o);
        fputc('\n', stderr);
    } else {
        fprintf(stderr, "# %s\n", detail);
    }
    fputs(p->text, stderr);
    fprintf(stderr, "==== end of finding (signature: %s) ====\n", sig);
    if (!keep_going) abort();
}

static const ProgenProgram *cur_program; /* the program being compiled and checked */

void __ubsan_on_report(void) {
    const char *kind = "", *message = "", *file = "";
    unsigned line = 0, col = 0;
    char *addr = NULL;
    __ubsan_get_current_report_data(&kind, &message, &file, &line, &col, &addr);
    if (!keep_going || !cur_program) return;
    char detail[512];
    snprintf(detail, sizeof detail, "undefined behaviour at %s:%u: %s: %s", file ? file : "?", line,
             kind ? kind : "?", message ? message : "");
    bool was = found;
    finding(cur_program, "undefined behaviour", NULL, detail);
    found = was; /* the check goes on */
}

static void check_input(const ProgenProgram *p, const VerifyPair *pair, const Value *in, size_t n) {
    Arena scratch;
    arena_init(&scratch);
    VerifyOutcome o;
    VerifyVerdict v = verify_input(pair, in, n, &scratch, &o);
    st.inputs++;
    switch (v) {
    case VERIFY_AGREE: break;
    case VERIFY_BOTH_ERROR: st.errors_agreed++; break;
    case VERIFY_OUTSIDE: finding(p, "the model cannot tokenize an input of its own vocabulary", &o, NULL); break;
    case VERIFY_MARGIN: /* margin checks guard real-valued s-ops: a refusal, allowed on real tokens */
        if (!p->real) finding(p, "the model refuses inside a margin on a finite vocabulary", &o, NULL);
        break;
    case VERIFY_MISMATCH:
        finding(p, !o.model_ok ? "the model raises where the reference answers"
                   : !o.ref_ok ? "the model answers where the reference raises"
                               : "outputs differ", &o, NULL);
        break;
    }
    arena_free(&scratch);
}

/* Whether the program matches the pattern of a known finding the user asked to skip. */
static bool known_finding(const IrNode *out) {
    if (skip_indices_output) {
        const IrNode *n = out;
        while (n->kind == IR_AGGREGATE && n->u.aggregate.selector->kind == IR_SELECT &&
               n->u.aggregate.selector->u.select.keys->kind == IR_INDICES &&
               n->u.aggregate.selector->u.select.queries->kind == IR_INDICES)
            n = n->u.aggregate.sop;
        if (n->kind == IR_INDICES) return true;
    }
    return false;
}

static uint64_t hash_bytes(const uint8_t *d, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

/* The weights of m, from the shapes (dense). */
static size_t model_weights(const Model *m) {
    size_t n = m->token_embed.rows * m->token_embed.cols + m->pos_embed.rows * m->pos_embed.cols;
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            n += H->wq.rows * H->wq.cols + H->wk.rows * H->wk.cols + H->wv.rows * H->wv.cols + H->wo.rows * H->wo.cols;
        }
        n += (L->mlp.gated ? 3 : 2) * L->mlp.w1.rows * L->mlp.w1.cols;
    }
    return n ? n : 1;
}

/* Every input of lengths 1..L (when `exhaustive`), then RANDOM_INPUTS random ones of lengths
 * L+1..max_len. */
static void check_model(const ProgenProgram *p, const Model *m, Workspace *ws, const IrGraph *g, const IrNode *out,
                        uint64_t seed, bool exhaustive) {
    VerifyReference ref;
    memset(&ref, 0, sizeof ref);
    ref.graph = *g;
    ref.out = out;
    VerifyPair pair = {.model = m, .ws = ws, .ref = &ref, .bound = verify_model_bound(m)};
    Arena a;
    arena_init(&a);
    Value *in = ARENA_ARRAY(&a, Value, m->max_len + 1);
    size_t limit = CHECK_WORK / model_weights(m);
    limit = limit < MIN_INPUTS ? MIN_INPUTS : limit > EXHAUSTIVE_LIMIT ? EXHAUSTIVE_LIMIT : limit;
    size_t L = verify_lengths_within(m->n_vocab, m->max_len, limit);
    VerifyOdometer odo;
    verify_odometer_init(&odo, m->vocab, m->n_vocab, L, &a);
    size_t n;
    if (m->numeric_tokens) { /* real tokens: random inputs, no enumeration */
        uint64_t state = seed;
        for (int k = 0; k < REAL_INPUTS && !found; k++)
            if ((n = verify_random_input(m, 0, &state, in))) check_input(p, &pair, in, n);
        arena_free(&a);
        return;
    }
    while (exhaustive && !found && verify_odometer_next(&odo, in, &n)) check_input(p, &pair, in, n);
    if (L < m->max_len && m->n_vocab) {
        uint64_t state = seed;
        for (int k = 0; k < RANDOM_INPUTS && !found; k++) {
            n = L + 1 + (size_t)(verify_rng_next(&state) % (m->max_len - L));
            for (size_t i = 0; i < n; i++) in[i] = m->vocab[verify_rng_next(&state) % m->n_vocab];
            check_input(p, &pair, in, n);
        }
    }
    arena_free(&a);
}

/* The model as raspcc writes it and rasprun reads it: serialised, read back, and the copy run on
 * the random inputs. */
static void check_written(const ProgenProgram *p, const Model *m, const IrGraph *g, const IrNode *out, uint64_t seed) {
    uint8_t *buf = NULL;
    size_t len = 0;
    char err[512], detail[600];
    if (!model_serialize(m, &buf, &len, err, sizeof err)) {
        snprintf(detail, sizeof detail, "model_serialize: %s", err);
        finding(p, "the compiled model cannot be written", NULL, detail);
        return;
    }
    Model back;
    if (!model_read_buffer(buf, len, &back, err, sizeof err)) {
        snprintf(detail, sizeof detail, "model_read_buffer: %s", err);
        free(buf);
        finding(p, "the written model does not read back", NULL, detail);
        return;
    }
    free(buf);
    Workspace ws;
    if (workspace_init(&ws, &back, err, sizeof err)) {
        check_model(p, &back, &ws, g, out, seed ^ 0x9e3779b97f4a7c15ull, false);
        workspace_free(&ws);
    }
    model_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    ProgenProgram p;
    if (!(reals ? progen_generate_real(data, size, &p) : progen_generate(data, size, &p))) return 0;
    st.programs++;
    found = false;
    cur_data = data;
    cur_size = size;
    cur_program = &p;
    for (int i = 0; i < PP_COUNT; i++)
        if (p.prods & ((uint64_t)1 << i)) st.prod_generated[i]++;
    FuzzSession s;
    if (!fuzz_begin(&s, (const uint8_t *)p.text, p.length)) {
        cur_program = NULL;
        progen_free(&p);
        return 0;
    }
    if (print_programs) {
        fprintf(stderr, "----\n");
        progen_print_header(stderr, &p);
        fputs(p.text, stderr);
    }
    IrGraph g;
    ElabResult r;
    const IrNode *out = fuzz_elaborate(&s, &g, &r) ? elab_find_output(&r, "out") : NULL;
    if (!out && (print_stats || print_programs)) {
        for (size_t i = 0; i < s.diags.count; i++)
            if (s.diags.items[i].severity == DIAG_ERROR) {
                char msg[80];
                snprintf(msg, sizeof msg, "(elaboration) %s", s.diags.items[i].message);
                if (print_programs) fprintf(stderr, "# %s\n", msg);
                if (print_stats) count_reason(msg);
                break;
            }
    }
    if (out && known_finding(out)) {
        st.skipped++;
        out = NULL;
    }
    if (out) {
        st.elaborated++;
        char flags[96];
        if (p.real)
            snprintf(flags, sizeof flags, "--range %s --max-len %zu%s", p.range, p.max_len, p.gated ? " --mlp gated" : "");
        else
            snprintf(flags, sizeof flags, "--vocab %s --max-len %zu", p.vocab, p.max_len);
        CodegenOptions co = {.vocab_spec = p.real ? NULL : p.vocab, .max_len = p.max_len, .program_source = p.text,
                             .program_name = "fuzz.rasp", .compile_flags = flags, .have_range = p.real,
                             .range_lo = p.range_lo, .range_hi = p.range_hi, .gated_mlp = p.gated};
        Model m;
        model_init(&m);
        double t0 = now_ms();
        bool ok = codegen_compile(&g, out, "out", &co, &m, &s.diags);
        double ms = now_ms() - t0;
        st.compile_ms += ms;
        if (ms > st.max_compile_ms) st.max_compile_ms = ms;
        if (ms > slow_ms) {
            char detail[160];
            snprintf(detail, sizeof detail, "compile took %.0f ms (limit %.0f ms, sanitized build); %s", ms, slow_ms,
                     ok ? "compiled" : "refused");
            finding(&p, "slow compile", NULL, detail);
        }
        if (print_programs) fprintf(stderr, "# %s (%.1f ms)\n", ok ? "compiled" : "refused", ms);
        if (!ok) {
            for (size_t i = 0; i < s.diags.count; i++)
                if (s.diags.items[i].severity == DIAG_ERROR) {
                    if (print_programs) fprintf(stderr, "#   %s\n", s.diags.items[i].message);
                    if (print_stats) count_reason(s.diags.items[i].message);
                    break;
                }
        } else {
            st.compiled++;
            for (int i = 0; i < PP_COUNT; i++)
                if (p.prods & ((uint64_t)1 << i)) st.prod_compiled[i]++;
            Workspace ws;
            char err[256];
            double t1 = now_ms();
            if (workspace_init(&ws, &m, err, sizeof err)) {
                check_model(&p, &m, &ws, &g, out, hash_bytes(data, size), true);
                workspace_free(&ws);
            } else {
                st.no_workspace++;
            }
            if (!found && model_weights(&m) <= WRITE_LIMIT) check_written(&p, &m, &g, out, hash_bytes(data, size));
            st.check_ms += now_ms() - t1;
        }
        model_free(&m);
    }
    fuzz_end(&s);
    cur_program = NULL;
    progen_free(&p);
    return 0;
}
