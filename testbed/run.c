/* Compile, run and measure one (task, n) (run.h). */
#include "testbed/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/codegen.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "runtime/forward.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The first error line of the diagnostics (without the source excerpt). */
static void first_error(const DiagList *d, char *buf, size_t size) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        snprintf(buf, size, "(no memory for the diagnostic)");
        return;
    }
    diag_render_all(f, d);
    fclose(f);
    size_t line = strcspn(text, "\n");
    snprintf(buf, size, "%.*s", (int)line, text);
    free(text);
}

void tb_defines_text(const TbDefine *defs, size_t count, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s-D '%s=%s'", i ? " " : "", defs[i].name, defs[i].value);
}

/* The instance as input atoms for the model and the reference. */
static Value *instance_atoms(const TbTask *t, const TbInstance *in, Arena *a) {
    Value *v = ARENA_ARRAY(a, Value, in->len ? in->len : 1);
    for (size_t i = 0; i < in->len; i++)
        v[i] = t->alphabet ? value_str(t->alphabet[in->tokens[i]]) : value_int(in->tokens[i]);
    return v;
}

/* Whether out[check_pos] holds the expected ints. */
static bool answers_right(const TbInstance *in, const Value *out) {
    for (size_t c = 0; c < in->n_checks; c++) {
        Value v = out[in->check_pos[c]];
        if (v.kind != VAL_INT || v.as.i != in->expect[c]) return false;
    }
    return true;
}

static void describe_instance(const TbTask *t, const TbInstance *in, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < in->len && used + 16 < size; i++) {
        if (t->alphabet) used += (size_t)snprintf(buf + used, size - used, "%s", t->alphabet[in->tokens[i]]);
        else used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)in->tokens[i]);
    }
    snprintf(buf + used, size - used, "%s] expects %lld at %zu", used + 16 < size ? "" : "...",
             (long long)in->expect[0], in->check_pos[0]);
}

/* Runs the instances through the compiled model m; counts into r. */
static void run_instances(const TbTask *t, const TbParams *p, const TbRunOptions *o, const IrGraph *g,
                          const IrNode *out, const Model *m, TbResult *r) {
    char err[512];
    Workspace ws;
    if (!workspace_init(&ws, m, err, sizeof err)) {
        r->stage = TB_STAGE_RUN;
        snprintf(r->stop, sizeof r->stop, "cannot run the model: %.400s", err);
        return;
    }
    TbRng rng = {tb_seed_mix(o->seed, t->name, p->n)};
    double spent = 0, last_report = now_ms();
    size_t attributed = 0;
    for (size_t i = 0; i < o->instances; i++) {
        Arena a;
        arena_init(&a);
        TbInstance in;
        t->generate(t, p, &rng, &a, &in);
        Value *atoms = instance_atoms(t, &in, &a), *res;
        double s = now_ms();
        bool ok = model_run(m, &ws, atoms, in.len, &a, &res, err, sizeof err);
        spent += now_ms() - s;
        r->instances++;
        if (ok && answers_right(&in, res)) {
            r->correct++;
        } else {
            r->model_errors += !ok;
            if (!r->first_failure[0]) {
                char what[384];
                describe_instance(t, &in, what, sizeof what);
                snprintf(r->first_failure, sizeof r->first_failure, "%.250s: %.250s", what, ok ? "model answered otherwise" : err);
            }
            if (attributed++ < TB_ATTRIBUTE_MAX) { /* is the program or the compiler wrong? */
                Value *ref;
                IrEvalError e;
                bool program_right = ir_eval(g, out, atoms, in.len, &a, &ref, &e) && answers_right(&in, ref);
                r->program_wrong += !program_right;
                r->compiler_wrong += program_right;
            }
        }
        arena_free(&a);
        if (o->progress && now_ms() - last_report > 200) {
            o->progress(o->progress_ctx, t->name, p->n, i + 1, o->instances);
            last_report = now_ms();
        }
    }
    r->run_ms = spent;
    workspace_free(&ws);
}

static void measure(const Model *m, TbResult *r) {
    r->layers = m->n_layers;
    r->residual_width = m->d_model;
    for (size_t l = 0; l < m->n_layers; l++) {
        r->heads += m->layers[l].n_heads;
        r->mlp_hidden += m->layers[l].mlp.w1.cols;
    }
    r->params = model_param_count(m);
    r->nonzero_params = model_nonzero_count(m);
}

void tb_run(const TbTask *t, size_t n, const TbRunOptions *o, TbResult *r) {
    memset(r, 0, sizeof *r);
    snprintf(r->task, sizeof r->task, "%s", t->name);
    r->n = n;
    r->max_len = tb_max_len(t, n);
    tb_vocab(t, n, r->vocab, sizeof r->vocab);
    TbParams p;
    TbDefine defs[1];
    size_t n_defs = tb_params(t, n, o->seed, &p, defs);
    tb_defines_text(defs, n_defs, r->defines, sizeof r->defines);

    Arena arena;
    arena_init(&arena);
    const char *path = arena_printf(&arena, "%s/%s.rasp", o->programs_dir, t->name);
    ElabOverride ov[1];
    for (size_t i = 0; i < n_defs; i++) ov[i] = (ElabOverride){defs[i].name, defs[i].value};
    ElabOptions eo = {0};
    eo.base_dir = o->programs_dir;
    eo.overrides = ov;
    eo.n_overrides = n_defs;
    IrGraph g;
    ir_graph_init(&g, &arena);
    DiagList diags;
    diag_init(&diags, &arena);
    ElabResult er;
    IrNode *out = NULL;
    if (!rasp_load_program(&g, path, NULL, NULL, &eo, &er, &diags)) {
        r->stage = TB_STAGE_LOAD;
        first_error(&diags, r->stop, sizeof r->stop);
    } else if (!(out = elab_find_output(&er, t->name))) {
        r->stage = TB_STAGE_LOAD;
        snprintf(r->stop, sizeof r->stop, "%s defines no s-op named %s", path, t->name);
    }
    if (out) {
        tb_classify(&g, out, &r->classification);
        CodegenOptions co = {0};
        co.vocab_spec = r->vocab;
        co.max_len = r->max_len;
        co.program_source = er.source;
        co.program_name = path;
        co.compile_flags = arena_printf(&arena, "--vocab %s --max-len %zu%s%s", r->vocab, r->max_len,
                                        n_defs ? " " : "", r->defines);
        co.max_mlp = o->max_mlp;
        co.max_bytes = o->max_bytes;
        Model m;
        model_init(&m);
        double t0 = now_ms();
        bool ok = codegen_compile(&g, out, t->name, &co, &m, &diags);
        r->compile_ms = now_ms() - t0;
        if (!ok) {
            r->stage = TB_STAGE_COMPILE;
            first_error(&diags, r->stop, sizeof r->stop);
        } else {
            measure(&m, r);
            run_instances(t, &p, o, &g, out, &m, r);
        }
        model_free(&m);
    }
    arena_free(&arena);
}
