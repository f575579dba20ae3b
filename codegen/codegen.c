/* The compiler driver: value sets -> plan -> weights (see codegen.h for the passes). */
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "codegen/internal.h"
#include "ir/eval.h"

/* The token type of the program: that of every `tokens_*` the output depends on. */
static bool find_token_type(const IrGraph *g, const IrNode *out, IrTokenType *type, bool *reads,
                            DiagList *diags) {
    *reads = false;
    *type = IR_TOKENS_STR;
    Arena a;
    arena_init(&a);
    bool *reach = ARENA_ARRAY(&a, bool, (size_t)out->id + 1);
    reach[out->id] = true;
    for (size_t id = out->id + 1; id-- > 0;) { /* ids are topological */
        const IrNode *n = g->nodes[id];
        if (!reach[id]) continue;
        switch (n->kind) {
        case IR_MAP: for (uint32_t j = 0; j < n->u.map.nargs; j++) reach[n->u.map.args[j]->id] = true; break;
        case IR_SELECT: reach[n->u.select.keys->id] = reach[n->u.select.queries->id] = true; break;
        case IR_SELECT_AND: case IR_SELECT_OR: case IR_SELECT_NOT:
            reach[n->u.combine.lhs->id] = true;
            if (n->u.combine.rhs) reach[n->u.combine.rhs->id] = true;
            break;
        case IR_AGGREGATE: reach[n->u.aggregate.selector->id] = reach[n->u.aggregate.sop->id] = true; break;
        case IR_SELECTOR_WIDTH: reach[n->u.width.selector->id] = true; break;
        default: break;
        }
    }
    bool ok = true;
    for (size_t id = 0; id <= out->id && ok; id++) {
        const IrNode *n = g->nodes[id];
        if (n->kind != IR_TOKENS || !reach[id]) continue;
        if (*reads && n->u.token_type != *type) {
            diag_error(diags, n->loc, "the program reads the input both as %s and as %s; the compiler needs one token type",
                       ir_token_type_name(*type), ir_token_type_name(n->u.token_type));
            ok = false;
        }
        *type = n->u.token_type;
        *reads = true;
    }
    arena_free(&a);
    return ok;
}

/* The token type a --vocab spec spells: an int range or a JSON list of numbers means ints (or
 * floats, bools), anything else strings. */
static IrTokenType vocab_token_type(const char *spec) {
    const char *s = spec + strspn(spec, " \t");
    if (*s == '[') {
        s++;
        s += strspn(s, " \t");
        if (*s == '"' || *s == ']') return IR_TOKENS_STR;
        if (!strncmp(s, "true", 4) || !strncmp(s, "false", 5)) return IR_TOKENS_BOOL;
        size_t len = strcspn(s, ",]");
        return memchr(s, '.', len) || memchr(s, 'e', len) || memchr(s, 'E', len) ? IR_TOKENS_FLOAT : IR_TOKENS_INT;
    }
    const char *dots = strstr(s + (*s == '-'), "..");
    if (dots) {
        char *end;
        strtol(s, &end, 10);
        if (end == dots) return IR_TOKENS_INT;
    }
    return IR_TOKENS_STR;
}

/* An output kept as exact rationals (sums and differences of means over one selector, LinMean)
 * cannot be read out exactly: the reference rounds each mean before it combines them, so its
 * double is one of several twins of the rational. Refused at the output. */
static bool exact_output(Plan *p, const IrNode *out) {
    const ValueSet *vs = &p->info[out->id].vs;
    bool floats = false; /* strings and bools decided from such values are checked where decided (mlp.c) */
    for (size_t i = 0; i < vs->n; i++) floats = floats || vs->vals[i].kind == VAL_FLOAT;
    if (!vs->approx || vs->unbounded || !floats) return true;
    char d[160];
    vs_describe(out, d, sizeof d);
    diag_error(p->diags, out->loc, "%s combines means over one selector, whose exact float64 value depends on how the "
               "reference rounds each of them; round it, or compare it with a threshold", d);
    return false;
}

/* A program with an s-op that takes no value at all (every combination of its arguments raises)
 * raises on every input: a model of it would have nothing to read out. Refused, with the
 * reference's own error on the shortest input. */
static bool takes_a_value(Plan *p, const IrNode *out, const IrGraph *g, const IrNode *output) {
    const IrNode *empty = NULL; /* an s-op the output reads that can take no value */
    size_t cells = p->max_len * (p->max_len + 1) / 2;
    for (size_t id = 0; id <= out->id && !empty; id++) {
        const SopInfo *x = &p->info[id];
        if (!x->reachable) continue;
        if (!ir_is_selector(x->node) && !x->vs.unbounded && x->vs.n == 0) empty = x->node;
        bool all_fail = x->pos && x->pos->any_fail; /* positional: it raises at every length */
        for (size_t c = 0; c < cells && all_fail; c++) all_fail = x->pos->fail[c];
        if (all_fail) empty = x->node;
    }
    if (!empty) return true;
    Arena a;
    arena_init(&a);
    Value in = p->numeric_tokens ? value_float(p->token_lo) : p->n_vocab ? p->vocab[0] : value_int(0);
    Value *res;
    IrEvalError e;
    char d[160];
    vs_describe(empty, d, sizeof d);
    if (ir_eval(g, output, &in, 1, &a, &res, &e))
        diag_error(p->diags, empty->loc, "%s can take no value: every combination of its arguments raises", d);
    else
        diag_error(p->diags, empty->loc, "%s raises on every input, so the program does (on one token: %s)", d, e.message);
    arena_free(&a);
    return false;
}

/* The first member of each kind of a bounded set (NULL where it has none). */
static void kinds_representatives(const ValueSet *vs, const Value *rep[VAL_STR + 1]) {
    for (int k = 0; k <= VAL_STR; k++) rep[k] = NULL;
    for (size_t i = 0; i < vs->n && !vs->unbounded; i++)
        if (!rep[vs->vals[i].kind]) rep[vs->vals[i].kind] = &vs->vals[i];
}

/* A comparison of a select that raises for some pair of values (a string against a number
 * under <): the reference raises whenever it evaluates such a select on such values, even where
 * another conjunct makes the selection empty. Refused at the select; so is a select on combined
 * means (approximate value sets), whose outcome depends on the reference's rounding. */
static bool selects_compare(Plan *p, const IrNode *out) {
    for (size_t id = 0; id <= out->id; id++) {
        const IrNode *n = p->g->nodes[id];
        if (!p->info[id].reachable || n->kind != IR_SELECT) continue;
        const ValueSet *K = &p->info[n->u.select.keys->id].vs, *Q = &p->info[n->u.select.queries->id].vs;
        if ((K->approx && !K->unbounded) || (Q->approx && !Q->unbounded)) {
            /* rationals standing for doubles that differ by rounding ((0.8 - 0.2) * 5 is
             * 3.0000000000000004): the scores cannot see which way the reference rounded */
            char d[160];
            vs_describe(K->approx ? n->u.select.keys : n->u.select.queries, d, sizeof d);
            diag_error(p->diags, n->loc, "this select compares %s, which combines means over one selector: whether two "
                       "values are equal or ordered depends on how the reference rounds each mean; round it first", d);
            return false;
        }
        /* whether a comparison raises depends on the kinds alone (a string against a number):
         * one member of each kind per side, not every pair (10^5 values make 10^10 pairs) */
        const Value *kr[VAL_STR + 1], *qr[VAL_STR + 1];
        kinds_representatives(K, kr);
        kinds_representatives(Q, qr);
        for (int a = 0; a <= VAL_STR; a++)
            for (int b = 0; b <= VAL_STR; b++) {
                char msg[160], ka[64], qb[64];
                if (!kr[a] || !qr[b] || ir_cmp_apply(n->u.select.cmp, *kr[a], *qr[b], msg, sizeof msg).ok) continue;
                value_format(*kr[a], ka, sizeof ka);
                value_format(*qr[b], qb, sizeof qb);
                diag_error(p->diags, n->loc, "this select compares %s with %s, which raises (%s): the program raises "
                           "wherever it does", ka, qb, msg);
                return false;
            }
    }
    return true;
}

/* How compile_once classifies maps (Plan.tables_first, size_rule) and reads counts
 * (Plan.plain_widths); what it found (table_over_gate, table_refused, used_heavy). */
typedef struct TableRule {
    bool tables_first;
    bool plain_widths;
    bool *size_rule;
    size_t n_size_rule;
    bool table_over_gate;
    uint32_t table_refused;
    bool used_heavy;
    size_t max_layers; /* > 0: a plan with more layers is not emitted (a model it would lose to exists) */
} TableRule;

static bool compile_once(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                         double tol, bool deep, Model *model, DiagList *diags, double *out_err, char **plan_text,
                         bool *has_reals, TableRule *rule) {
    Arena scratch;
    arena_init(&scratch);
    Plan p;
    memset(&p, 0, sizeof p);
    p.g = g;
    p.arena = &scratch;
    p.diags = diags;
    p.max_len = opt->max_len ? opt->max_len : 8;
    p.numbers_only = opt->numbers_only;
    p.plain_heads = opt->plain_heads;
    p.real_tol = tol;
    p.deep_squares = deep;
    p.real_margin = opt->real_margin > 0 ? opt->real_margin : 1e-6;
    p.gated_mlp = opt->gated_mlp;
    p.max_mlp = opt->max_mlp ? opt->max_mlp : CODEGEN_DEFAULT_MAX_MLP;
    p.max_bytes = opt->max_bytes ? opt->max_bytes : CODEGEN_DEFAULT_MAX_BYTES;
    p.win_lo = 1;
    p.win_hi = p.max_len;
    p.tables_first = rule->tables_first;
    p.plain_widths = rule->plain_widths;
    p.size_rule = rule->size_rule;
    p.n_size_rule = rule->n_size_rule;
    bool reads_tokens, ok = find_token_type(g, output, &p.token_type, &reads_tokens, diags);
    char err[256];
    if (ok && !reads_tokens && opt->vocab_spec) /* the tokens are never read: take the kind the vocabulary spells */
        p.token_type = vocab_token_type(opt->vocab_spec);
    if (ok && opt->have_range && !(isfinite(opt->range_lo) && isfinite(opt->range_hi) && opt->range_lo <= opt->range_hi &&
                                   fmax(fabs(opt->range_lo), fabs(opt->range_hi)) <= 1e100)) {
        diag_error(diags, output->loc, "--range %g..%g: a real range is two finite numbers, LO <= HI, at most 1e100 in "
                   "magnitude (sums and products of such values must stay finite)", opt->range_lo, opt->range_hi);
        ok = false;
    }
    if (ok && !opt->vocab_spec && p.token_type == IR_TOKENS_FLOAT && opt->have_range) {
        /* real-valued tokens: numbers with an interval and an error bound (reals.c) */
        p.numeric_tokens = true;
        p.token_lo = opt->range_lo;
        p.token_hi = opt->range_hi;
        p.vocab = ARENA_NEW(&scratch, Value);
        p.vocab[0] = value_float(opt->range_lo);
        p.n_vocab = 1;
    } else if (ok && !opt->vocab_spec) {
        diag_error(diags, output->loc, "no vocabulary: give --vocab (characters 'abc', a list 'a,b,c' or an int range '0..9'); %s",
                   reads_tokens ? "the program reads tokens" : "it says which inputs the model accepts");
        ok = false;
    }
    if (ok && !p.numeric_tokens && p.token_type == IR_TOKENS_FLOAT && strstr(opt->vocab_spec, "..")) {
        diag_error(diags, output->loc, "tokens_float takes a finite --vocab list (e.g. 0.5,1,2.5) or, for real values, "
                   "--range LO..HI without --vocab");
        ok = false;
    }
    if (ok && !p.numeric_tokens && !codegen_parse_vocab(opt->vocab_spec, p.token_type, &scratch, &p.vocab, &p.n_vocab, err, sizeof err)) {
        diag_error(diags, output->loc, "%s", err);
        ok = false;
    }
    if (out_err) *out_err = NAN; /* the analysis failed: whatever the share */
    if (ok) {
        IrGraph lowered; /* the program after rewrite.c, in the compiler's own arena */
        ir_graph_init(&lowered, &scratch);
        const IrNode *out = rewrite_program(g, output, p.max_len, &lowered);
        p.g = &lowered;
        p.info = ARENA_ARRAY(&scratch, SopInfo, lowered.count ? lowered.count : 1);
        ok = vs_compute(&p, out);
        for (size_t i = 0; has_reals && ok && i < lowered.count; i++) *has_reals = *has_reals || p.info[i].real;
        if (ok && out_err) {
            const RealInfo *r = p.info[out->id].real;
            *out_err = !r ? 0 : r->how == REAL_REFUSED ? INFINITY : r->err + r->rel; /* the bound where |value| <= 1 */
        }
        if (ok && model) {
            ok = takes_a_value(&p, out, g, output) && exact_output(&p, out) && selects_compare(&p, out) && plan_build(&p, out);
            if (opt->plan_out && plan_text) { /* also what was planned before a refusal */
                size_t len;
                free(*plan_text);
                *plan_text = NULL;
                FILE *f = open_memstream(plan_text, &len);
                if (!f) abort();
                plan_dump(&p, out, f);
                fclose(f);
            }
            ok = ok && schedule_check(&p);
            /* keep_better would drop it unseen: its tables are the costly part of a compile */
            if (ok && rule->max_layers && (size_t)schedule_layers(&p) > rule->max_layers) ok = false;
            ok = ok && emit_model(&p, out, output_name, opt, model);
        }
    }
    rule->table_over_gate = p.table_over_gate;
    rule->table_refused = p.table_refused;
    rule->used_heavy = p.used_heavy;
    arena_free(&scratch);
    return ok;
}

static size_t mlp_hidden(const Model *m) {
    size_t h = 0;
    for (size_t l = 0; l < m->n_layers; l++) h += m->layers[l].mlp.w1.cols;
    return h;
}

/* Keeps in *a the better of models a (ok_a) and b (ok_b, freed if not kept): built, then fewer
 * layers, then fewer MLP units; a on ties. Moves b's plan text in with it. */
static bool keep_better(Model *a, bool ok_a, Model *b, bool ok_b, char **plan_text, char *text_b) {
    bool take_b = ok_b && (!ok_a || b->n_layers < a->n_layers ||
                           (b->n_layers == a->n_layers && mlp_hidden(b) < mlp_hidden(a)));
    if (take_b) {
        model_free(a);
        *a = *b;
        if (plan_text) {
            free(*plan_text);
            *plan_text = text_b;
        }
        return true;
    }
    model_free(b);
    free(text_b);
    return ok_a;
}

/* A way to build the model: tables first with its retries (compile_tables), or the size rule
 * (compile_once); counts through heavy heads or plain; with max_layers > 0, only where it takes
 * at most that many layers (else it fails, quietly where the caller's diagnostics are quiet). */
typedef struct Way {
    bool tables;
    bool plain_widths;
    size_t max_layers;
} Way;

static bool compile_tables(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                           double tol, bool deep, Model *model, DiagList *diags, double *out_err, char **plan_text,
                           bool *has_reals, bool plain_widths, size_t max_layers, bool *used_heavy);

static bool compile_way(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                        double tol, bool deep, Model *model, DiagList *diags, double *out_err, char **plan_text,
                        bool *has_reals, const Way *way) {
    bool used_heavy;
    if (way->tables)
        return compile_tables(g, output, output_name, opt, tol, deep, model, diags, out_err, plan_text, has_reals,
                              way->plain_widths, way->max_layers, &used_heavy);
    return compile_once(g, output, output_name, opt, tol, deep, model, diags, out_err, plan_text, has_reals,
                        &(TableRule){.tables_first = false, .plain_widths = way->plain_widths,
                                     .max_layers = way->max_layers});
}

/* After a first way built *model (ok) with diagnostics from `before` on: where it failed, `way`'s
 * model, or its refusal as the error; else `way`'s model too, quietly, and the better kept
 * (keep_better), built only where it takes no more layers (more would lose). */
static bool alternative(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                        double tol, bool deep, Model *model, DiagList *diags, double *out_err, char **plan_text,
                        bool *has_reals, bool ok, size_t before, const Way *way) {
    if (!ok) {
        diag_truncate(diags, before);
        model_free(model);
        model_init(model);
        return compile_way(g, output, output_name, opt, tol, deep, model, diags, out_err, plan_text, has_reals, way);
    }
    Model alt;
    model_init(&alt);
    Arena quiet_arena;
    arena_init(&quiet_arena);
    DiagList quiet;
    diag_init(&quiet, &quiet_arena);
    char *text = NULL;
    Way limited = *way;
    limited.max_layers = model->n_layers;
    bool alt_ok = compile_way(g, output, output_name, opt, tol, deep, &alt, &quiet, NULL, plan_text ? &text : NULL, NULL,
                              &limited);
    arena_free(&quiet_arena);
    return keep_better(model, true, &alt, alt_ok, plan_text, text);
}

/* One compilation with `tol` the error allowed to each approximated function of reals, and
 * products' squares by depth where one MLP would take more than SQ_ONE_LAYER_STEPS knots (`deep`;
 * else in one MLP). With model NULL it stops after the analysis and gives the output's error
 * bound in *out_err (0 when the output is not real-valued, INFINITY when it cannot be bounded or
 * the analysis fails). With --dump-plan, the plan's text replaces *plan_text (heap): the caller
 * prints the one of the model it keeps.
 *
 * Maps are tabulated first where gating them would cost a slot (the fewest layers), each table
 * checked for rounding by mlp.c; a map whose table it refuses takes the size rule on the next
 * attempt. Where some attempt kept a table the size rule would gate, or had one refused, the
 * size rule's model is built too and kept unless it has more layers, or as many and more units;
 * and where tables first fails it is the model (or the refusal reported), so no program the size
 * rule compiles is refused. With plain_widths, no head weighs BOS heavily; *used_heavy: some did. */
static bool compile_tables(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                           double tol, bool deep, Model *model, DiagList *diags, double *out_err, char **plan_text,
                           bool *has_reals, bool plain_widths, size_t max_layers, bool *used_heavy) {
    TableRule first = {.tables_first = true, .plain_widths = plain_widths, .max_layers = max_layers};
    *used_heavy = false;
    size_t before = diags->count;
    bool ok = false, differs = false; /* from the size rule, in some attempt */
    for (int attempt = 0; attempt <= CG_TABLE_RETRIES; attempt++) {
        first.table_refused = 0;
        first.table_over_gate = false;
        ok = compile_once(g, output, output_name, opt, tol, deep, model, diags, out_err, plan_text, has_reals, &first);
        *used_heavy = *used_heavy || first.used_heavy;
        uint32_t r = first.table_refused;
        differs = differs || first.table_over_gate || r;
        if (ok || !r || !model || (r - 1 < first.n_size_rule && first.size_rule[r - 1])) break;
        if (r > first.n_size_rule) { /* node ids are stable: each attempt lowers the same program */
            first.size_rule = realloc(first.size_rule, r * sizeof *first.size_rule);
            if (!first.size_rule) abort();
            memset(first.size_rule + first.n_size_rule, 0, (r - first.n_size_rule) * sizeof *first.size_rule);
            first.n_size_rule = r;
        }
        first.size_rule[r - 1] = true;
        diag_truncate(diags, before);
        model_free(model);
        model_init(model);
    }
    free(first.size_rule);
    if (!model || !differs) return ok; /* the size rule would build the same, or refuse the same */
    return alternative(g, output, output_name, opt, tol, deep, model, diags, out_err, plan_text, has_reals, ok, before,
                       &(Way){.tables = false, .plain_widths = plain_widths, .max_layers = max_layers});
}

/* compile_tables with counts through heavy heads (classify.c width_bos_weight) and, where some
 * were, without them too: reading a sum of counts as one number saves the joint tables of sort
 * and Dyck, but a table that reads a heavy count beside other counts can round past its check
 * (out24b-001, -002) or take more units than the counts' own tables (out24b-003). The model with
 * fewer layers, then fewer units, is kept, and where the heavy one is refused the plain one is
 * the model (or its refusal the error): no program the plain way compiles is refused. */
static bool compile_at(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                       double tol, bool deep, Model *model, DiagList *diags, double *out_err, char **plan_text,
                       bool *has_reals) {
    size_t before = diags->count;
    bool used_heavy;
    bool ok = compile_tables(g, output, output_name, opt, tol, deep, model, diags, out_err, plan_text, has_reals, false,
                             0, &used_heavy);
    if (!model || !used_heavy) return ok;
    return alternative(g, output, output_name, opt, tol, deep, model, diags, out_err, plan_text, has_reals, ok, before,
                       &(Way){.tables = true, .plain_widths = true});
}

/* A real-valued output whose proven bound is above --tol is said, not hidden: no share of it
 * proved less (errors grow through divisions and exponentials; float64 rounding of the MLPs' long
 * sums grows as pieces get finer) or fitted the size limits. True. */
static bool warn_above_tol(const Model *m, const IrNode *output, double target, DiagList *diags) {
    if (m->out_error_bound + m->out_error_rel > target) /* --tol bounds err + rel at |value| 1 */
        diag_warning(diags, output->loc,
                     "the output's proven error bound, %g + %g |value|, is above the %g asked (--tol); "
                     "--dump-plan shows the bound of each real s-op",
                     m->out_error_bound, m->out_error_rel, target);
    return true;
}

/* The shares of --tol tried, in the order to build them (share_before), with the bound each proves. */
typedef struct Shares {
    double share[CG_TOL_ATTEMPTS], bound[CG_TOL_ATTEMPTS];
    size_t n;
    bool failed;    /* the analysis failed outright (no share, no depth changes that) */
    bool has_reals; /* some s-op is real (products whose squares may go by depth) */
} Shares;

/* Whether share a (proving bound ea) is tried before share b: within target and coarser, or
 * within it where b is not, or both above it and a proves less. */
static bool share_before(double target, double a, double ea, double b, double eb) {
    if ((ea <= target) != (eb <= target)) return ea <= target;
    return ea <= target ? a > b : ea < eb;
}

/* --tol bounds the output's error: each approximated function gets a share of it, found by
 * shrinking that share until the analysis proves the output within --tol (the error is mostly
 * proportional to it; float64 rounding is not, hence the few attempts). */
static void find_shares(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                        double target, bool deep, Shares *out) {
    double tol = target, over = INFINITY, fine = 0;
    size_t n = 0;
    double *share = out->share, *bound = out->bound;
    out->failed = out->has_reals = false;
    for (int attempt = 0; attempt < CG_TOL_ATTEMPTS; attempt++) {
        Arena quiet_arena;
        arena_init(&quiet_arena);
        DiagList quiet;
        diag_init(&quiet, &quiet_arena);
        double e;
        compile_at(g, output, output_name, opt, tol, deep, NULL, &quiet, &e, NULL, &out->has_reals);
        arena_free(&quiet_arena);
        if (isnan(e)) { /* refused for a reason no share changes: say why at once */
            out->failed = n == 0;
            break;
        }
        if (fine > 0) { /* narrowing down on the coarsest share within --tol (below) */
            if (isfinite(e)) {
                share[n] = tol;
                bound[n++] = e;
            }
            if (isfinite(e) && e <= target) fine = tol;
            else over = tol;
        } else if (!isfinite(e) && n == 0) { /* --tol itself too fine to build (out23-003): coarser, for the
                                              * least bound that does, stated with a warning; from
                                              * float64's resolution on at once (out23b-002: 1e-100) */
            if (attempt >= CG_TOL_COARSEN) break;
            tol = fmax(tol * 16, CG_TOL_FINEST);
            continue;
        } else if (!isfinite(e)) { /* too fine to build: halfway (in log) to the last share that built */
            if (tol >= share[n - 1] * 0.5) break;
            tol = sqrt(tol * share[n - 1]);
            continue;
        } else {
            share[n] = tol;
            bound[n++] = e;
            if (e == 0) break; /* not real-valued */
            if (e > target && n >= 2 && e >= bound[n - 2] && tol < share[n - 2]) break; /* finer stopped helping */
            if (e > target) {
                over = fmin(over, tol);
                tol *= fmax(0.8 * target / e, 1.0 / 256);
                continue;
            }
            fine = tol;
        }
        /* within --tol after a long step down (the error is not proportional to the share: a
         * product's squares gain levels as it shrinks): the coarsest share between that also is,
         * for fewer units, halfway in log while the two are 16 times apart */
        if (!(over < INFINITY && over / fine >= 16)) break;
        tol = sqrt(fine * over);
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && share_before(target, share[j], bound[j], share[j - 1], bound[j - 1]); j--) {
            double t = bound[j]; bound[j] = bound[j - 1]; bound[j - 1] = t;
            t = share[j]; share[j] = share[j - 1]; share[j - 1] = t;
        }
    out->n = n;
}

/* Builds the first share of sh that fits the size limits, then coarser than --tol asks when none
 * does (the bound stated is the one proven); quietly: false (model empty) when none builds. */
static bool build_shares(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                         const Shares *sh, bool deep, Model *model, char **plan_text) {
    double coarse = sh->share[0];
    for (size_t i = 0; i < sh->n; i++) coarse = fmax(coarse, sh->share[i]);
    for (size_t i = 0; i < sh->n + CG_TOL_COARSER; i++) {
        double s = i < sh->n ? sh->share[i] : coarse * pow(16, (double)(i - sh->n + 1));
        Arena quiet_arena;
        arena_init(&quiet_arena);
        DiagList quiet;
        diag_init(&quiet, &quiet_arena);
        bool ok = compile_at(g, output, output_name, opt, s, deep, model, &quiet, NULL, plan_text, NULL);
        arena_free(&quiet_arena);
        if (ok) return true;
        model_free(model);
        model_init(model);
    }
    return false;
}

/* The model's proven error where |value| is 1 (what --tol bounds). */
static double error_at_one(const Model *m) { return m->out_error_bound + m->out_error_rel; }
static bool within(const Model *m, double target) { return error_at_one(m) <= target; }

/* The search (codegen_compile), the plan text of the model kept into *plan_text. */
static bool compile_search(const IrGraph *g, const IrNode *output, const char *output_name, const CodegenOptions *opt,
                           Model *model, DiagList *diags, char **plan_text) {
    double target = opt->real_tol > 0 ? opt->real_tol : opt->gated_mlp ? 1e-9 : 1e-6;
    /* the fewest layers first: products' squares in one MLP each; by depth (more layers, far
     * fewer units, rounding-level products) only when that does not prove --tol or fit */
    Shares one;
    find_shares(g, output, output_name, opt, target, false, &one);
    if (one.n && one.bound[0] == 0) { /* not real-valued: no share to choose, but its products
                                       * may need depth (out23-002: x * y > 0.5 at --tol 1e-9) */
        size_t before = diags->count;
        bool shallow_ok = compile_at(g, output, output_name, opt, target, false, model, diags, NULL, plan_text, NULL);
        if (shallow_ok || !one.has_reals) return shallow_ok; /* (no real s-op: depth changes nothing) */
        Arena quiet_arena;
        arena_init(&quiet_arena);
        DiagList quiet;
        diag_init(&quiet, &quiet_arena);
        model_free(model);
        model_init(model);
        char *text = NULL;
        bool ok = compile_at(g, output, output_name, opt, target, true, model, &quiet, NULL, &text, NULL);
        arena_free(&quiet_arena);
        if (ok) { /* the errors of one MLP per square, now moot */
            diag_truncate(diags, before);
            free(*plan_text);
            *plan_text = text;
        } else {
            free(text);
            model_free(model);
            model_init(model);
        }
        return ok;
    }
    if (one.n == 0 && one.failed) /* the refusal, as the analysis gives it */
        return compile_at(g, output, output_name, opt, target, false, model, diags, NULL, plan_text, NULL);
    /* (no share analysed with one MLP per square at all: straight to depth, out23b-001) */
    if (one.n && build_shares(g, output, output_name, opt, &one, false, model, plan_text) && within(model, target))
        return warn_above_tol(model, output, target, diags);
    Model shallow = *model; /* what one MLP per square gave, if anything */
    model_init(model);
    Shares deep;
    find_shares(g, output, output_name, opt, target, true, &deep);
    char *text = NULL;
    bool have_deep = deep.n && build_shares(g, output, output_name, opt, &deep, true, model, &text);
    if (have_deep && (!shallow.n_layers || error_at_one(model) < error_at_one(&shallow))) {
        model_free(&shallow);
        free(*plan_text);
        *plan_text = text;
        return warn_above_tol(model, output, target, diags);
    }
    free(text);
    model_free(model);
    *model = shallow;
    if (shallow.n_layers) return warn_above_tol(model, output, target, diags);
    model_init(model);
    return compile_at(g, output, output_name, opt, one.n ? one.share[0] : target, false, model, diags, NULL, plan_text, NULL) &&
           warn_above_tol(model, output, target, diags);
}

bool codegen_compile(const IrGraph *g, const IrNode *output, const char *output_name,
                     const CodegenOptions *opt, Model *model, DiagList *diags) {
    if (ir_is_selector(output)) {
        diag_error(diags, output->loc, "'%s' is a selector; the output must be an s-op", output_name);
        return false;
    }
    char *plan_text = NULL; /* --dump-plan: the plan of the model kept (or of the last refusal) */
    bool ok = compile_search(g, output, output_name, opt, model, diags, &plan_text);
    if (opt->plan_out && plan_text) fputs(plan_text, opt->plan_out);
    free(plan_text);
    return ok;
}
