/* viz/: residual labels into blocks, the writers of each dim, the trace of a run, the dot graph
 * and the PNG heatmap, on the sort program of the RASP paper compiled in-process. */
#include <check.h>
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "tests/compile_fixture.h"
#include "viz/dot.h"
#include "viz/heatmap.h"
#include "viz/trace.h"

static const char sort_src[] =
    "tokens = tokens_int;\n"
    "def stable_sort(vals, keys) {\n"
    "    precedes = select(keys, keys, <) or (select(keys, keys, ==) and select(indices, indices, <));\n"
    "    target = selector_width(precedes);\n"
    "    return aggregate(select(target, indices, ==), vals);\n"
    "}\n"
    "sorted = stable_sort(tokens, tokens);\n";

/* ---- labels ---- */

static size_t parse(Arena *a, const char *label, const char **qual, const char **value) {
    return residual_parse_label(a, label, qual, value);
}

START_TEST(test_labels) {
    Arena a;
    arena_init(&a);
    const char *q, *v;
    ck_assert_uint_eq(parse(&a, "tokens:\"a\"", &q, &v), 6);
    ck_assert_str_eq(q, "");
    ck_assert_str_eq(v, "\"a\"");
    ck_assert_uint_eq(parse(&a, "tokens:\"a:b\"", &q, &v), 6); /* a ':' inside a string value */
    ck_assert_str_eq(v, "\"a:b\"");
    ck_assert_uint_eq(parse(&a, "aggregate@8:11", &q, &v), 14); /* an unnamed s-op's number */
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(parse(&a, "map@10:29:\"P\"", &q, &v), 9);
    ck_assert_str_eq(v, "\"P\"");
    ck_assert_uint_eq(parse(&a, "indices:-3", &q, &v), 7);
    ck_assert_str_eq(v, "-3");
    ck_assert_uint_eq(parse(&a, "x:1.5", &q, &v), 1);
    ck_assert_uint_eq(parse(&a, "x:inf", &q, &v), 1);
    ck_assert_str_eq(v, "inf");
    ck_assert_uint_eq(parse(&a, "b:True", &q, &v), 1);
    ck_assert_str_eq(v, "True");
    ck_assert_uint_eq(parse(&a, "target: 1/(width+1) term 1", &q, &v), 6);
    ck_assert_str_eq(q, " 1/(width+1) term 1");
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(parse(&a, "x:kind:2", &q, &v), 1);
    ck_assert_str_eq(q, "kind");
    ck_assert_str_eq(v, "2");
    ck_assert_uint_eq(parse(&a, "x:mean(i^2)", &q, &v), 1);
    ck_assert_str_eq(q, "mean(i^2)");
    ck_assert_uint_eq(parse(&a, "1/y", &q, &v), 3);
    ck_assert_uint_eq(parse(&a, "guard:length:4", &q, &v), 5);
    ck_assert_str_eq(q, "length");
    ck_assert_uint_eq(parse(&a, "#weird", &q, &v), 0);
    ck_assert_uint_eq(parse(&a, "x y", &q, &v), 0);
    ck_assert(residual_label_is("target:3", "target"));
    ck_assert(residual_label_is("target", "target"));
    ck_assert(!residual_label_is("targets:3", "target"));
    arena_free(&a);
}
END_TEST

/* A model of 7 dims with hand-written labels: the blocks they make. */
START_TEST(test_blocks_from_labels) {
    Model m;
    model_init(&m);
    static char *labels[] = {"one", "tokens:\"a\"", "tokens:\"b\"", "x:kind:1", "x:kind:2", "aggregate@1:2",
                             "aggregate@1:9"};
    m.d_model = 7;
    m.labels = labels;
    m.token_embed = model_matrix(&m, 1, 7);
    m.pos_embed = model_matrix(&m, 1, 7);
    Arena a;
    arena_init(&a);
    ResidualLayout L;
    residual_layout(&a, &m, &L);
    ck_assert_uint_eq(L.n_blocks, 5); /* one, tokens, x:kind, and two numbers side by side */
    ck_assert_str_eq(L.blocks[1].name, "tokens");
    ck_assert(L.blocks[1].one_hot && L.blocks[1].count == 2);
    ck_assert_str_eq(L.blocks[1].values[1], "b"); /* shown without quotes */
    ck_assert_str_eq(L.blocks[2].name, "x:kind");
    ck_assert_uint_eq(L.blocks[2].sop_len, 1);
    ck_assert(!L.blocks[3].one_hot && !L.blocks[4].one_hot);
    ck_assert_uint_eq(L.block_of[6], 4);
    char buf[64];
    double x[7] = {1, 0, 1, 0.5, 0.5, -0.0, 2.5};
    residual_block_text(&L.blocks[1], x, buf, sizeof buf);
    ck_assert_str_eq(buf, "b");
    residual_block_text(&L.blocks[2], x, buf, sizeof buf);
    ck_assert_str_eq(buf, "{1 0.5, 2 0.5}");
    residual_block_text(&L.blocks[3], x, buf, sizeof buf);
    ck_assert_str_eq(buf, "0"); /* no "-0" */
    residual_block_text(&L.blocks[4], x, buf, sizeof buf);
    ck_assert_str_eq(buf, "2.5");
    double empty[7] = {0};
    residual_block_text(&L.blocks[1], empty, buf, sizeof buf);
    ck_assert_str_eq(buf, ".");
    arena_free(&a);
    m.labels = NULL;
    model_free(&m);
}
END_TEST

/* The writers found in the weights agree with the compiler's plan (raspcc --dump-plan: target
 * is built in layer 0, sorted by layer 1's attention): the plan is printed by codegen itself. */
START_TEST(test_writers_match_plan) {
    Compiled *c = compile_src(sort_src, "sorted", "0..9", 5);
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    Arena a;
    arena_init(&a);
    ResidualLayout L;
    residual_layout(&a, &c->model, &L);
    size_t seen_sorted = 0, seen_target = 0;
    for (size_t b = 0; b < L.n_blocks; b++) {
        const ResidualBlock *B = &L.blocks[b];
        for (size_t d = B->dim; d < B->dim + B->count; d++) {
            if (!strcmp(B->name, "sorted")) {
                ck_assert_uint_eq(L.n_writers[d], 1);
                ck_assert(L.writers[d][0].kind == WRITER_HEAD && L.writers[d][0].layer == 1);
                seen_sorted++;
            } else if (!strcmp(B->name, "target")) { /* the one-hot width, from layer 0's MLP */
                ck_assert(L.n_writers[d] >= 1 && L.writers[d][L.n_writers[d] - 1].kind == WRITER_MLP &&
                          L.writers[d][L.n_writers[d] - 1].layer == 0);
                seen_target++;
            } else if (!strcmp(B->name, "tokens") || !strcmp(B->name, "indices")) {
                ck_assert_uint_eq(L.n_writers[d], 1);
                ck_assert(L.writers[d][0].kind == WRITER_EMBED);
            }
        }
    }
    ck_assert_uint_eq(seen_sorted, 10); /* one dim per value 0..9 */
    ck_assert(seen_target > 0);
    char w[64];
    residual_writer_text((ResidualWriter){WRITER_HEAD, 1, 0}, w, sizeof w);
    ck_assert_str_eq(w, "layer 1 head 0");
    arena_free(&a);
    compiled_free(c);
}
END_TEST

/* ---- trace ---- */

static Value ints[] = {{.kind = VAL_INT, .as.i = 3}, {.kind = VAL_INT, .as.i = 1}, {.kind = VAL_INT, .as.i = 2}};

START_TEST(test_trace_decodes_the_run) {
    Compiled *c = compile_src(sort_src, "sorted", "0..9", 5);
    ck_assert(c->ok);
    char err[256];
    Workspace ws;
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    Arena a;
    arena_init(&a);
    ResidualLayout L;
    residual_layout(&a, &c->model, &L);
    VizTrace t;
    ck_assert(viz_trace_run(&c->model, &ws, ints, 3, &a, &t, err, sizeof err));
    ck_assert_uint_eq(t.n_stages, c->model.n_layers + 1);
    ck_assert(t.ok);
    ck_assert(t.out[0].as.i == 1 && t.out[1].as.i == 2 && t.out[2].as.i == 3);
    /* the embedding holds the tokens; the last stage's sorted block says what the model answered */
    char buf[64];
    for (size_t b = 0; b < L.n_blocks; b++) {
        for (size_t i = 0; i < 3; i++) {
            if (!strcmp(L.blocks[b].name, "tokens")) {
                residual_block_text(&L.blocks[b], viz_trace_row(&t, 0, i + 1), buf, sizeof buf);
                ck_assert_int_eq(atoi(buf), (int)ints[i].as.i);
            }
            if (!strcmp(L.blocks[b].name, "sorted")) {
                residual_block_text(&L.blocks[b], viz_trace_row(&t, t.n_stages - 1, i + 1), buf, sizeof buf);
                ck_assert_int_eq(atoi(buf), (int)t.out[i].as.i);
                residual_block_text(&L.blocks[b], viz_trace_row(&t, 1, i + 1), buf, sizeof buf);
                ck_assert_str_eq(buf, "."); /* not written before layer 1 */
            }
        }
    }
    /* the text: a section per stage, '+' on what a stage wrote, the output last */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    viz_trace_print(f, &c->model, &L, &t, ints);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "input: [3, 1, 2]\nembedding\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nlayer 1 (attention: 1 head; MLP: 0 hidden units)\n"));
    ck_assert_ptr_nonnull(strstr(text, "  + sorted "));
    ck_assert_ptr_nonnull(strstr(text, "    tokens ")); /* after the embedding, unchanged */
    const char *last = "\noutput: [1, 2, 3]\n";
    ck_assert(len > strlen(last) && !strcmp(text + len - strlen(last), last));
    free(text);
    viz_trace_free(&t);
    /* an input the model cannot take */
    Value big[] = {{.kind = VAL_INT, .as.i = 12}};
    ck_assert(!viz_trace_run(&c->model, &ws, big, 1, &a, &t, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "vocabulary"));
    arena_free(&a);
    workspace_free(&ws);
    compiled_free(c);
}
END_TEST

/* ---- dot ---- */

START_TEST(test_dot_graph) {
    Compiled *c = compile_src(sort_src, "sorted", "0..9", 5);
    ck_assert(c->ok);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    viz_write_dot(f, &c->g, c->out, &c->model);
    fclose(f);
    ck_assert(strncmp(text, "digraph rasp {\n", 15) == 0 && !strcmp(text + len - 2, "}\n"));
    size_t open = 0, close = 0;
    for (const char *p = text; *p; p++) open += *p == '{', close += *p == '}';
    ck_assert_uint_eq(open, close);
    ck_assert_ptr_nonnull(strstr(text, "label=\"sorted\\naggregate(_, tokens, default=0)\\nlayer 1: head 0 (10 dims)\""));
    ck_assert_ptr_nonnull(strstr(text, "selector_width(precedes)\\nlayer 0: heads 0, 1, MLP"));
    ck_assert_ptr_nonnull(strstr(text, "tokens\\ntokens_int\\nembedding (10 dims)"));
    ck_assert_ptr_nonnull(strstr(text, "label=\"layer 1\""));
    ck_assert_ptr_nonnull(strstr(text, "penwidth=2.5")); /* the output */
    ck_assert_ptr_nonnull(strstr(text, "one: embedding (1 dim)"));
    /* an edge from the selector to the aggregate, dashed; the prelude's unused nodes are absent */
    ck_assert_ptr_nonnull(strstr(text, "[style=dashed]"));
    ck_assert_ptr_null(strstr(text, "tokens_str"));
    free(text);
    /* without a model: no placement */
    text = NULL;
    f = open_memstream(&text, &len);
    viz_write_dot(f, &c->g, c->out, NULL);
    fclose(f);
    ck_assert_ptr_null(strstr(text, "layer"));
    ck_assert_ptr_nonnull(strstr(text, "aggregate(_, tokens, default=0)"));
    free(text);
    compiled_free(c);
}
END_TEST

/* Two s-ops named alike (a function called twice): each says its dims are shared. */
START_TEST(test_dot_shared_names) {
    Compiled *c = compile_src("def back(x) { y = aggregate(select(indices, indices - 1, ==), x); return y; }\n"
                              "a = back(tokens_int);\nb = back(a);\n", "b", "0..3", 4);
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    viz_write_dot(f, &c->g, c->out, &c->model);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "(with 1 other s-op named y)"));
    free(text);
    compiled_free(c);
}
END_TEST

/* ---- heatmap ---- */

START_TEST(test_heatmap_png) {
    Compiled *c = compile_src(sort_src, "sorted", "0..9", 5);
    ck_assert(c->ok);
    char err[256];
    Workspace ws;
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    Arena a;
    arena_init(&a);
    ResidualLayout L;
    residual_layout(&a, &c->model, &L);
    VizTrace t;
    ck_assert(viz_trace_run(&c->model, &ws, ints, 3, &a, &t, err, sizeof err));
    char *png = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&png, &len);
    ck_assert_msg(viz_heatmap_write(f, &c->model, &L, &t, ints, err, sizeof err), "%s", err);
    fclose(f);
    /* read it back with libpng */
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ck_assert(png_image_begin_read_from_memory(&img, png, len));
    img.format = PNG_FORMAT_RGB;
    uint8_t *px = malloc(PNG_IMAGE_SIZE(img));
    ck_assert(png_image_finish_read(&img, NULL, px, 0, NULL));
    VizHeatmapLayout G;
    viz_heatmap_layout(&c->model, &t, ints, &G);
    ck_assert_uint_eq(img.width, G.width);
    ck_assert_uint_eq(img.height, G.height);
    /* the longest label: a term of the stable sort's width, through a heavy BOS (64 x 2 x 5^2 -> 2^12) */
    ck_assert_uint_eq(G.label_chars, strlen("target: 4096/(4096+width) term 1"));
    /* every cell's colour: red for the largest positive value of its dim, white for 0, and in
     * between by value / the dim's largest |value| */
    size_t D = t.d;
    double *scale = calloc(D, sizeof *scale);
    for (size_t s = 0; s < t.n_stages; s++)
        for (size_t r = 0; r <= t.n; r++)
            for (size_t d = 0; d < D; d++) scale[d] = fmax(scale[d], fabs(viz_trace_row(&t, s, r)[d]));
    size_t checked = 0;
    for (size_t s = 0; s < t.n_stages; s++)
        for (size_t r = 0; r <= t.n; r++)
            for (size_t d = 0; d < D; d++) {
                size_t x = G.panel_x + s * G.panel_step + r * G.cell_w + G.cell_w / 2;
                size_t y = G.top + d * G.row_h + G.row_h / 2;
                const uint8_t *p = px + 3 * (y * G.width + x);
                double v = viz_trace_row(&t, s, r)[d], u = scale[d] > 0 ? v / scale[d] : 0;
                ck_assert(v >= 0); /* this program's residual has no negative entries */
                long fade = lround(255 * (1 - u));
                ck_assert_msg(p[0] == 255 && p[1] == fade && p[2] == fade, "stage %zu row %zu dim %zu: %d %d %d for %g",
                              s, r, d, p[0], p[1], p[2], u);
                checked++;
            }
    ck_assert_uint_eq(checked, t.n_stages * 4 * D);
    free(scale);
    free(px);
    free(png);
    viz_trace_free(&t);
    arena_free(&a);
    workspace_free(&ws);
    compiled_free(c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("viz");
    TCase *tc = tcase_create("viz");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_labels);
    tcase_add_test(tc, test_blocks_from_labels);
    tcase_add_test(tc, test_writers_match_plan);
    tcase_add_test(tc, test_trace_decodes_the_run);
    tcase_add_test(tc, test_dot_graph);
    tcase_add_test(tc, test_dot_shared_names);
    tcase_add_test(tc, test_heatmap_png);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
