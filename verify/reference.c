/* The reference side: the program stored in a model, elaborated afresh. */
#include <string.h>

#include "ir/elaborate.h"
#include "verify/verify.h"

bool verify_reference_load(VerifyReference *r, const Model *m, const char *base_dir, FILE *diag_out, char *err,
                           size_t errsize) {
    memset(r, 0, sizeof *r);
    arena_init(&r->arena);
    ir_graph_init(&r->graph, &r->arena);
    DiagList diags;
    diag_init(&diags, &r->arena);
    ElabOptions opt = {0};
    opt.base_dir = base_dir;
    ElabResult res;
    const char *name = m->program_name && *m->program_name ? m->program_name : "<model program>";
    const char *source = m->program_source ? m->program_source : "";
    if (!rasp_load_program(&r->graph, NULL, source, name, &opt, &res, &diags)) {
        snprintf(err, errsize, "the program stored in the model does not load");
        if (diag_out) diag_render_all(diag_out, &diags);
        verify_reference_free(r);
        return false;
    }
    r->out = m->output_name ? elab_find_output(&res, m->output_name) : NULL;
    if (!r->out) {
        snprintf(err, errsize, "the program stored in the model has no s-op '%s'",
                 m->output_name ? m->output_name : "");
        verify_reference_free(r);
        return false;
    }
    return true;
}

void verify_reference_free(VerifyReference *r) {
    arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}
