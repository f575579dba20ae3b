/* The error flag (codegen/errflag.h): programs compiled, the flag added, and every input up to
 * the maximum length run: the flag is set exactly where the runtime's checks fail, the answers
 * are those of the model without it, BOS stays 0, the file keeps it, and the runtime notices a
 * flag that disagrees. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "codegen/errflag.h"
#include "compile_fixture.h"
#include "runtime/forward.h"
#include "runtime/model_io.h"

typedef struct Program {
    const char *what, *src, *output, *vocab;
    size_t max_len;
    bool raises; /* some input fails */
} Program;

static const Program programs[] = {
    {"reverse (categorical output)", "r = aggregate(select(indices, length - indices - 1, ==), tokens);", "r", "abc", 4, false},
    {"hist (numerical output)", "r = selector_width(select(tokens, tokens, ==));", "r", "abc", 4, false},
    {"strings averaged over equal tokens (single_key, one_kind)", "r = aggregate(select(tokens, tokens, ==), tokens);", "r",
     "ab", 5, true},
    {"a dict without a key (one_hot check)", "r = {\"a\": 1, \"b\": 2}[tokens];", "r", "abc", 4, true},
    {"strings and numbers across positions (one_kind)", "r = \"s\" if tokens == \"a\" else 1;", "r", "ab", 5, true},
    {"1, 1.0 and True (kind block)", "r = 1 if tokens == \"a\" else (1.0 if tokens == \"b\" else True);", "r", "abc", 4, false},
    {"per-length values, raising at some lengths",
     "x4 = [3, 1, 2][[0.5, 2, True][length]]; r = indices * aggregate(select(length, indices, >), x4 or tokens);", "r", "ab",
     5, true},
    {"a mean compared with a constant", "p = aggregate(select(indices, indices, <=), indicator(tokens == \"a\")); r = p > 0.5;",
     "r", "ab", 5, false},
    {"finding 002: strings and numbers by length (one_kind over a list index)", "r = [1, \"q\", \"q\", 0][length];", "r",
     "a", 9, true},
    {"finding 002: a string where a histogram exceeds 1 (one_kind)",
     "h = selector_width(select(tokens, tokens, ==)); r = \"x\" if h > 1 else h;", "r", "abc", 6, true},
    {"finding 002: the length or a string (one_kind, per-length values)",
     "n = aggregate(select(indices, indices, <=), indicator(tokens == \"a\")); r = length if n == 0 else \"no\";", "r", "ab",
     10, true},
    {"two one_kind checks (the old flag refused more than one)",
     "a = \"s\" if tokens == \"a\" else 1; b = aggregate(select(indices, 0, ==), a); c = aggregate(select(indices, 1, ==), a);\n"
     "r = b if indices == 0 else c;",
     "r", "ab", 5, true},
    {"the Dyck-1 program (several checks)",
     "p = select(indices, indices, <=); b = aggregate(p, indicator(tokens == \"(\")) - aggregate(p, indicator(tokens == \")\"));\n"
     "f = aggregate(p, indicator(b < 0)) > 0; d = \"F\" if f else (\"T\" if b == 0 else \"P\");",
     "d", "()", 6, false},
};

/* Every input of length 1..max_len over the model's vocabulary. */
static size_t all_inputs(const Model *m, Arena *a, const Value ***inputs, size_t **lens) {
    size_t total = 0, V = m->n_vocab, count = 1;
    for (size_t n = 1; n <= m->max_len; n++) total += (count *= V);
    *inputs = ARENA_ARRAY(a, const Value *, total);
    *lens = ARENA_ARRAY(a, size_t, total);
    size_t k = 0;
    for (size_t n = 1; n <= m->max_len; n++) {
        size_t combos = 1;
        for (size_t i = 0; i < n; i++) combos *= V;
        for (size_t c = 0; c < combos; c++, k++) {
            Value *in = ARENA_ARRAY(a, Value, n);
            for (size_t i = 0, x = c; i < n; i++, x /= V) in[i] = m->vocab[x % V];
            (*inputs)[k] = in;
            (*lens)[k] = n;
        }
    }
    return total;
}

static ModelOutcome *run_all(const Model *m, Arena *a, const Value **inputs, const size_t *lens, size_t total) {
    Workspace ws;
    char err[256];
    ck_assert_msg(workspace_init(&ws, m, err, sizeof err), "%s", err);
    ModelOutcome *o = ARENA_ARRAY(a, ModelOutcome, total);
    model_run_batch(m, &ws, inputs, lens, total, a, o);
    workspace_free(&ws);
    return o;
}

static bool flag_set(const ModelOutcome *o, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (o->flag[i] != 0) return true;
    return false;
}

START_TEST(test_flag_agrees_with_checks) {
    const Program *p = &programs[_i];
    Compiled *c = compile_src(p->src, p->output, p->vocab, p->max_len);
    ck_assert_msg(c->ok, "%s: %s", p->what, compiled_first_error(c));
    Arena a;
    arena_init(&a);
    const Value **inputs;
    size_t *lens, total = all_inputs(&c->model, &a, &inputs, &lens);
    ModelOutcome *plain = run_all(&c->model, &a, inputs, lens, total);
    size_t D0 = c->model.d_model, L0 = c->model.n_layers;
    char err[512];
    ck_assert_msg(errflag_add(&c->model, err, sizeof err), "%s: %s", p->what, err);
    ck_assert(c->model.has_error_flag && c->model.d_model > D0 && c->model.n_layers > L0);
    ck_assert_str_eq(c->model.labels[c->model.error_flag_dim], "err");
    ck_assert_msg(model_check_layers(&c->model, err, sizeof err) && model_check_checks(&c->model, err, sizeof err), "%s", err);
    ModelOutcome *flagged = run_all(&c->model, &a, inputs, lens, total);
    size_t raised = 0;
    for (size_t k = 0; k < total; k++) {
        const ModelOutcome *x = &plain[k], *y = &flagged[k];
        ck_assert_msg(y->ok || strncmp(y->err, MODEL_FLAG_ERROR, strlen(MODEL_FLAG_ERROR)), "%s: input %zu: %s", p->what, k,
                      y->err);
        ck_assert_msg(y->flag != NULL, "%s: input %zu ran without a flag", p->what, k);
        ck_assert_msg(flag_set(y, lens[k]) == !y->ok, "%s: input %zu: flag %s, outcome %s", p->what, k,
                      flag_set(y, lens[k]) ? "set" : "clear", y->ok ? "ok" : y->err);
        ck_assert_msg(x->ok == y->ok, "%s: input %zu: the flag changed the outcome", p->what, k);
        if (!x->ok) ck_assert_str_eq(x->err, y->err);
        for (size_t i = 0; x->ok && i < lens[k]; i++) ck_assert(value_equal(x->out[i], y->out[i]));
        raised += !y->ok;
    }
    ck_assert_msg((raised > 0) == p->raises, "%s: %zu of %zu inputs raised", p->what, raised, total);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

/* err is 0 at BOS (every unit of the flag is switched off there), on the empty input too. */
START_TEST(test_bos_row_clear) {
    Compiled *c = compile_src(programs[2].src, "r", "ab", 5);
    char err[256];
    ck_assert(c->ok && errflag_add(&c->model, err, sizeof err));
    Workspace ws;
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    size_t ids[2] = {1, 1}, D = c->model.d_model;
    double *X = calloc(3 * D, sizeof *X);
    model_forward(&c->model, ids, 2, 0, c->model.n_layers, X, &ws);
    ck_assert(X[c->model.error_flag_dim] == 0.0);             /* BOS */
    ck_assert(X[D + c->model.error_flag_dim] >= 1.0);         /* "bb": both select two keys */
    model_forward(&c->model, ids, 0, 0, c->model.n_layers, X, &ws);
    ck_assert(X[c->model.error_flag_dim] == 0.0);
    free(X);
    workspace_free(&ws);
    compiled_free(c);
}
END_TEST

/* A flag that says otherwise than the checks fails the input with MODEL_FLAG_ERROR. */
START_TEST(test_disagreement_reported) {
    for (int way = 0; way < 2; way++) {
        Compiled *c = compile_src(programs[2].src, "r", "ab", 5);
        char err[256];
        ck_assert(c->ok && errflag_add(&c->model, err, sizeof err));
        ModelMlp *last = &c->model.layers[c->model.n_layers - 1].mlp;
        size_t e = c->model.error_flag_dim;
        if (way == 0) {
            last->b2[e] = 0.5; /* set everywhere: inputs that pass disagree */
        } else {               /* never set: inputs that fail disagree */
            for (size_t l = 0; l < c->model.n_layers; l++) {
                Matrix *w2 = &c->model.layers[l].mlp.w2;
                for (size_t h = 0; h < w2->rows; h++) matrix_set(w2, h, e, 0.0);
            }
        }
        Workspace ws;
        ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
        Arena a;
        arena_init(&a);
        Value in[2] = {value_str("a"), value_str("b")}, *out;
        if (way == 1) in[1] = value_str("a"); /* "aa" averages two strings */
        ck_assert(!model_run(&c->model, &ws, in, 2, &a, &out, err, sizeof err));
        ck_assert_msg(strncmp(err, MODEL_FLAG_ERROR, strlen(MODEL_FLAG_ERROR)) == 0, "%s", err);
        arena_free(&a);
        workspace_free(&ws);
        compiled_free(c);
    }
}
END_TEST

static bool contains(const uint8_t *buf, size_t len, const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(buf + i, s, n)) return true;
    return false;
}

/* The file keeps the flag; a file without "error_flag" (every older one) loads without it; a
 * flag outside the residual is refused. */
START_TEST(test_file) {
    Compiled *c = compile_src(programs[0].src, "r", "abc", 4);
    char err[256];
    uint8_t *buf;
    size_t len;
    ck_assert(c->ok && model_serialize(&c->model, &buf, &len, err, sizeof err));
    ck_assert(!contains(buf, len, "error_flag"));
    Model m;
    model_init(&m);
    ck_assert_msg(model_read_buffer(buf, len, &m, err, sizeof err), "%s", err);
    ck_assert(!m.has_error_flag);
    model_free(&m);
    free(buf);
    ck_assert(errflag_add(&c->model, err, sizeof err));
    ck_assert(!errflag_add(&c->model, err, sizeof err)); /* once only */
    ck_assert(model_serialize(&c->model, &buf, &len, err, sizeof err));
    model_init(&m);
    ck_assert_msg(model_read_buffer(buf, len, &m, err, sizeof err), "%s", err);
    ck_assert(m.has_error_flag && m.error_flag_dim == c->model.error_flag_dim && m.n_layers == c->model.n_layers);
    model_free(&m);
    free(buf);
    c->model.error_flag_dim = c->model.d_model; /* the writer checks it too */
    ck_assert(!model_serialize(&c->model, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "error flag") != NULL, "%s", err);
    compiled_free(c);
}
END_TEST

/* A check read after the last layer must still hold what it held after its own layer. */
START_TEST(test_rewritten_check_refused) {
    Compiled *c = compile_src(programs[3].src, "r", "abc", 4);
    ck_assert(c->ok && c->model.n_checks > 0 && c->model.n_layers > 0);
    const ModelCheck *k = &c->model.checks[0];
    Model *m = &c->model;
    /* a later layer that writes the checked block again */
    ModelLayer *layers = ARENA_ARRAY(&m->arena, ModelLayer, m->n_layers + 1);
    memcpy(layers, m->layers, m->n_layers * sizeof *layers);
    ModelLayer *L = &layers[m->n_layers];
    L->heads = ARENA_NEW(&m->arena, ModelHead);
    L->mlp.w1 = model_matrix(m, m->d_model, 0);
    L->mlp.w2 = model_matrix(m, 0, m->d_model);
    L->mlp.b1 = ARENA_NEW(&m->arena, double);
    L->mlp.b2 = ARENA_ARRAY(&m->arena, double, m->d_model);
    L->mlp.b2[k->dim] = 1.0;
    m->layers = layers;
    m->n_layers++;
    char err[512];
    size_t D = m->d_model;
    ck_assert(!errflag_add(m, err, sizeof err));
    ck_assert_msg(strstr(err, "writes again") != NULL, "%s", err);
    ck_assert(m->d_model == D && !m->has_error_flag); /* unchanged */
    compiled_free(c);
}
END_TEST

/* err is a sum of terms >= 0: every weight into err of the flag's layers is positive (so no
 * rounding residue of one unit can cancel another's, finding 002). */
START_TEST(test_err_weights_positive) {
    const Program *p = &programs[_i];
    Compiled *c = compile_src(p->src, p->output, p->vocab, p->max_len);
    ck_assert(c->ok);
    size_t L0 = c->model.n_layers;
    char err[512];
    ck_assert_msg(errflag_add(&c->model, err, sizeof err), "%s", err);
    size_t e = c->model.error_flag_dim, n = 0;
    for (size_t l = L0; l < c->model.n_layers; l++) {
        const ModelLayer *L = &c->model.layers[l];
        MatrixColumn col = matrix_column(&L->mlp.w2, e);
        for (uint32_t k = 0; k < col.n; k++, n++) ck_assert_msg(col.val[k] > 0, "%s: layer %zu: %g", p->what, l, col.val[k]);
        ck_assert(L->mlp.b2[e] == 0);
        for (size_t h = 0; h < L->n_heads; h++) ck_assert(matrix_column(&L->heads[h].wo, e).n == 0);
    }
    ck_assert(n > 0);
    compiled_free(c);
}
END_TEST

static Compiled *compile_real(const char *src, double lo, double hi, double margin) {
    CodegenOptions o = {.have_range = true, .range_lo = lo, .range_hi = hi, .max_len = 5, .real_margin = margin};
    Compiled *c = compile_with(src, "out", o);
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    char err[512];
    ck_assert_msg(errflag_add(&c->model, err, sizeof err), "%s", err);
    return c;
}

/* One real token through a flagged model: its outcome, copied out of the arena. */
typedef struct Run {
    bool ok, flag_set, flag_error;
    double flag;
    char note[600];
} Run;

static Run run_token(const Compiled *c, double x) {
    Workspace ws;
    char err[256];
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    Arena a;
    arena_init(&a);
    Value in = value_float(x);
    const Value *inputs[1] = {&in};
    size_t len = 1;
    ModelOutcome o;
    model_run_batch(&c->model, &ws, inputs, &len, 1, &a, &o);
    Run r = {o.ok, o.flag && o.flag[0] != 0, !o.ok && !strncmp(o.err, MODEL_FLAG_ERROR, strlen(MODEL_FLAG_ERROR)),
             o.flag ? o.flag[0] : 0, ""};
    if (o.note) snprintf(r.note, sizeof r.note, "%s", o.note);
    arena_free(&a);
    workspace_free(&ws);
    return r;
}

/* Finding 001: the margin check fails where |v - c| <= m; just outside, the flag may be set
 * (inside its band) and the runtime answers with a note, never an internal error; inside, the
 * flag is >= 1; far outside, 0 with no note. */
START_TEST(test_margin_boundary) {
    struct {
        const char *src;
        double lo, hi, margin, c;
    } cases[] = {{"tokens = tokens_float; out = tokens > 0;", -1, 1, 0, 0},
                 {"tokens = tokens_float; out = tokens > 1;", -2, 2, 0.5, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        Compiled *c = compile_real(cases[i].src, cases[i].lo, cases[i].hi, cases[i].margin);
        double m = cases[i].margin ? cases[i].margin : 1e-6, at = cases[i].c;
        for (int side = -1; side <= 1; side += 2) {
            double edge = at + side * m;
            /* the first doubles past the edge where the runtime's |v - c| (rounded) exceeds m */
            double first = nextafter(edge, side * INFINITY);
            while (!(fabs(first - at) > m)) first = nextafter(first, side * INFINITY);
            double outside[] = {first, side > 0 ? edge * (1 + 0x1p-45) : edge - m * 0x1p-45};
            for (size_t k = 0; k < 2; k++) {
                Run r = run_token(c, outside[k]);
                ck_assert_msg(r.ok && !r.flag_error, "%.17g: %s", outside[k], r.note);
                ck_assert_msg(!r.flag_set || strstr(r.note, "inside the flag's band"), "%.17g: flag %g, no note", outside[k], r.flag);
            }
            double inside[] = {edge, nextafter(first, -side * INFINITY), at + side * m / 2, at};
            for (size_t k = 0; k < 4; k++) {
                Run r = run_token(c, inside[k]);
                ck_assert_msg(!r.ok && !r.flag_error && r.flag >= 1, "%.17g: ok %d, flag %g", inside[k], r.ok, r.flag);
            }
            Run far = run_token(c, at + side * 2 * m);
            ck_assert(far.ok && !far.flag_set && !far.note[0]);
        }
        compiled_free(c);
    }
}
END_TEST

/* The program of that row has two one_kind checks. */
START_TEST(test_two_one_kind_checks) {
    const Program *p = programs;
    while (strncmp(p->what, "two one_kind", 12)) p++;
    Compiled *c = compile_src(p->src, p->output, p->vocab, p->max_len);
    ck_assert(c->ok);
    size_t kinds = 0;
    for (size_t i = 0; i < c->model.n_checks; i++) kinds += c->model.checks[i].kind == MODEL_CHECK_ONE_KIND;
    ck_assert_msg(kinds >= 2, "%s: %zu one_kind checks", p->what, kinds);
    compiled_free(c);
}
END_TEST

/* Finding 003: an output that is the int 1 or the token compiles with the flag (the integers it
 * may reach bounded by the tighter analysis), and the flag agrees with the checks on a grid. */
START_TEST(test_int_or_real_output) {
    Compiled *c = compile_real("tokens = tokens_float; out = 1 if tokens > 0 else tokens;", -2, 2, 0);
    for (int j = -64; j <= 64; j++) {
        Run r = run_token(c, j / 32.0 * 0.999 + 3e-6);
        ck_assert_msg(!r.flag_error && r.flag_set == !r.ok && !r.note[0], "%g: ok %d flag %g %s", j / 32.0, r.ok, r.flag, r.note);
    }
    compiled_free(c);
}
END_TEST

/* The integer test has no band on a readout of one dim: a model whose int output is off by d
 * (its last layer shifted) is refused exactly where d exceeds the error bound, and the flag is
 * set exactly there. */
START_TEST(test_integer_boundary_exact) {
    const char *src = "tokens = tokens_float; out = 0 if tokens < 0 else tokens;";
    CodegenOptions o = {.have_range = true, .range_lo = -2, .range_hi = 2, .max_len = 3};
    Compiled *probe = compile_with(src, "out", o);
    ck_assert(probe->ok && probe->model.output_kind == MODEL_OUT_NUMERICAL && probe->model.out_count == 0);
    double b = probe->model.out_error_bound;
    compiled_free(probe);
    double shifts[] = {b, nextafter(b, INFINITY), b / 2, 2 * b, -b, nextafter(-b, -INFINITY)};
    for (size_t i = 0; i < sizeof shifts / sizeof *shifts; i++) {
        Compiled *c = compile_with(src, "out", o);
        Model *m = &c->model;
        size_t out = 0;
        for (size_t d = 0; d < m->d_model; d++)
            if (m->out_readout[d] != 0) out = d;
        m->layers[m->n_layers - 1].mlp.b2[out] += shifts[i];
        char err[512];
        ck_assert_msg(errflag_add(m, err, sizeof err), "%s", err);
        Run r = run_token(c, -1.5); /* the int 0, shifted */
        bool fits = fabs(shifts[i]) <= b;
        ck_assert_msg(r.ok == fits && r.flag_set == !fits && !r.flag_error && !r.note[0], "shift %.17g: ok %d flag %g", shifts[i],
                      r.ok, r.flag);
        compiled_free(c);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("errflag");
    TCase *tc = tcase_create("errflag");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_flag_agrees_with_checks, 0, (int)(sizeof programs / sizeof *programs));
    tcase_add_loop_test(tc, test_err_weights_positive, 0, (int)(sizeof programs / sizeof *programs));
    tcase_add_test(tc, test_two_one_kind_checks);
    tcase_add_test(tc, test_margin_boundary);
    tcase_add_test(tc, test_int_or_real_output);
    tcase_add_test(tc, test_integer_boundary_exact);
    tcase_add_test(tc, test_bos_row_clear);
    tcase_add_test(tc, test_disagreement_reported);
    tcase_add_test(tc, test_file);
    tcase_add_test(tc, test_rewritten_check_refused);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
