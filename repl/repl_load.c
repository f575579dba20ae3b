/* load "NAME"; as the original runs it: NAME.rasp (relative to the working directory) read line
 * by line like the console, in a scope of its own nested in the base environment, whose public
 * names reach the loader; its results are kept and printed when the file is done, each public
 * name once, with its last value (unless an error was kept too: then everything, in order). */
#include <stdlib.h>
#include <string.h>

#include "repl/lineread.h"
#include "repl/repl.h"

/* filter_and_dump_prints: prints what the loads so far kept, and forgets it. */
static void dump_pending(Repl *r) {
    bool any_text = false;
    for (size_t i = 0; i < r->n_pending; i++) any_text = any_text || r->pending[i].kind == ENTRY_TEXT;
    bool *keep = calloc(r->n_pending ? r->n_pending : 1, sizeof *keep);
    if (!keep) abort();
    for (size_t i = r->n_pending; i-- > 0;) {
        keep[i] = true;
        if (any_text || r->pending[i].kind != ENTRY_NAMED) continue;
        for (size_t j = i + 1; j < r->n_pending && keep[i]; j++)
            if (keep[j] && r->pending[j].kind == ENTRY_NAMED && strcmp(r->pending[j].name, r->pending[i].name) == 0)
                keep[i] = false;
    }
    size_t n = r->n_pending;
    r->n_pending = 0; /* a load printed below cannot re-enter, but keep the list consistent */
    for (size_t i = 0; i < n; i++) {
        if (!keep[i]) continue;
        ElabFault f;
        if (!show_entry(r, &r->pending[i], &f)) {
            fprintf(r->out, "something went wrong: %s\n", f.text ? f.text : repl_last_diag(r));
            break;
        }
    }
    free(keep);
}

bool repl_load(Repl *r, const char *name, Env *scope, const char **err) {
    char *path = malloc(strlen(name) + 6);
    if (!path) abort();
    sprintf(path, "%s.rasp", name);
    FILE *f = fopen(path, "r");
    if (!f) {
        *err = arena_printf(&r->arena, "could not find file: %s", path);
        free(path);
        return false;
    }
    free(path);
    bool seq = r->show_seq_examples, sel = r->show_sel_examples;
    r->show_seq_examples = r->show_sel_examples = false;
    LineSource *src = line_source_file(f);
    if (!src) abort();
    repl_run_lines(r, src, elab_session_file_scope(r->session, scope, name), true);
    line_source_free(src);
    fclose(f);
    dump_pending(r);
    r->show_seq_examples = seq;
    r->show_sel_examples = sel;
    return true;
}
