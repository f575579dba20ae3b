/* driver/: one compile job (program text or file, flags as typed, messages kept and rendered,
 * the self-check, stats) and --batch manifests (each line into a request, one JSON result line
 * each). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/batch.h"
#include "driver/compile.h"
#include "runtime/model_io.h"
#include "tests/check_main.h"

static const char reverse_src[] =
    "opp = length - indices - 1;\n"
    "reverse = aggregate(select(indices, opp, ==), tokens);\n";

static CompileRequest source_request(const char *src) {
    CompileRequest r = {0};
    r.source = src;
    r.source_name = "t.rasp";
    return r;
}

START_TEST(test_job_compiles_text) {
    CompileRequest r = source_request("out = aggregate(select(indices, length - indices - 1, ==), tokens);\n");
    r.vocab = "abc";
    r.max_len = "4";
    CompileJob j;
    compile_job_init(&j);
    ck_assert_int_eq(compile_job_run(&j, &r), 0);
    ck_assert(j.compiled && j.selfchecked);
    ck_assert_str_eq(j.output_name, "out");
    ck_assert_uint_eq(j.selfcheck.mismatches, 0);
    ck_assert_uint_eq(j.selfcheck.exhaustive_len, 4); /* 3 + 9 + 27 + 81 inputs <= 2000 */
    ck_assert_int_eq(j.file_bytes, -1);             /* no model path: no file */
    ck_assert_str_eq(j.model.compile_flags, "--vocab abc --max-len 4");
    /* --stats --json: one line, parsed back */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    compile_job_print_stats(f, &j, true);
    fclose(f);
    Arena a;
    arena_init(&a);
    JsonValue *v;
    char err[128];
    ck_assert(len > 0 && text[len - 1] == '\n' && !memchr(text, '\n', len - 1));
    ck_assert_msg(json_parse(&a, text, len, &v, err, sizeof err), "%s", err);
    ck_assert_int_eq((int)json_get(v, "layers")->number, (int)j.model.n_layers);
    ck_assert(json_get(v, "file_bytes")->kind == JSON_NULL);
    ck_assert_int_eq((int)json_get(json_get(v, "selfcheck"), "inputs")->number, (int)j.selfcheck.inputs);
    arena_free(&a);
    free(text);
    compile_job_free(&j);
}
END_TEST

START_TEST(test_job_writes_the_model) {
    char path[] = "/tmp/raspcc-test-driver-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    CompileRequest r = source_request(reverse_src);
    r.vocab = "ab";
    r.max_len = "3";
    r.model_path = path;
    CompileJob j;
    compile_job_init(&j);
    ck_assert_int_eq(compile_job_run(&j, &r), 0);
    ck_assert(j.file_bytes > 0);
    Model m;
    char err[256];
    ck_assert_msg(model_read(path, &m, err, sizeof err), "%s", err);
    ck_assert_str_eq(m.output_name, "reverse");
    ck_assert_str_eq(m.program_name, "t.rasp");
    model_free(&m);
    compile_job_free(&j);
    unlink(path);
}
END_TEST

/* Messages are kept with their locations, and rendered as they happen when asked. */
START_TEST(test_job_messages) {
    CompileRequest r = source_request("x = tokens +;\n");
    char *text = NULL;
    size_t len = 0;
    r.messages = open_memstream(&text, &len);
    CompileJob j;
    compile_job_init(&j);
    ck_assert_int_eq(compile_job_run(&j, &r), 2);
    fclose(r.messages);
    ck_assert_uint_ge(j.diags.count, 1);
    const Diag *d = &j.diags.items[0];
    ck_assert(d->severity == DIAG_ERROR && d->loc.line == 1 && d->loc.col == 13);
    ck_assert_str_eq(d->loc.file->name, "t.rasp");
    ck_assert_ptr_nonnull(strstr(text, "t.rasp:1:13: error: "));
    ck_assert_ptr_nonnull(strstr(text, "  x = tokens +;\n"));
    free(text);
    compile_job_free(&j);

    /* a flag's value: a usage failure, named as the command line says it */
    r = source_request("out = tokens;\n");
    r.max_len = "0";
    compile_job_init(&j);
    ck_assert_int_eq(compile_job_run(&j, &r), 2);
    ck_assert(j.usage && !j.compiled);
    ck_assert_str_eq(j.diags.items[j.diags.count - 1].message, "--max-len needs a positive integer, got '0'");
    ck_assert_ptr_null(j.diags.items[j.diags.count - 1].loc.file);
    compile_job_free(&j);

    /* no such output: the ones there are */
    r = source_request("a = tokens;\nb = indices;\n");
    r.output = "c";
    compile_job_init(&j);
    ck_assert_int_eq(compile_job_run(&j, &r), 2);
    ck_assert_str_eq(j.diags.items[0].message, "'c' is not a top-level s-op of the program; available outputs: a b");
    compile_job_free(&j);

    /* the error flag's layers held to --max-mlp and --max-bytes (findings-out34 003: they were not) */
    const char *flagged = "tokens = tokens_int;\n"
                          "out = aggregate(select(indices, indices, <=) and select(tokens, 3, >=), tokens, 0);\n";
    const char *limits[2][2] = {{"100", NULL}, {NULL, "1000000"}}, *says[2] = {"--max-mlp", "--max-bytes"};
    for (int k = 0; k < 2; k++) {
        char *text = NULL;
        size_t len = 0;
        r = source_request(flagged);
        r.vocab = "0..6", r.max_len = "16", r.error_flag = true, r.max_mlp = limits[k][0], r.max_bytes = limits[k][1];
        r.messages = open_memstream(&text, &len);
        compile_job_init(&j);
        ck_assert_int_eq(compile_job_run(&j, &r), 2);
        fclose(r.messages);
        ck_assert_msg(strstr(text, "--error-flag") && strstr(text, says[k]), "%s", text);
        free(text);
        compile_job_free(&j);
    }
    r = source_request(flagged); /* and within them, compiled */
    r.vocab = "0..6", r.max_len = "16", r.error_flag = true, r.no_selfcheck = true;
    compile_job_init(&j);
    ck_assert_int_eq(compile_job_run(&j, &r), 0);
    ck_assert(j.model.has_error_flag);
    compile_job_free(&j);

    /* an unreadable file */
    r = (CompileRequest){.program = "/nonexistent/p.rasp"};
    compile_job_init(&j);
    ck_assert_int_eq(compile_job_run(&j, &r), 2);
    ck_assert_str_eq(j.diags.items[0].message, "cannot read /nonexistent/p.rasp: No such file or directory");
    compile_job_free(&j);
}
END_TEST

/* ---- manifests ---- */

static bool parse_line(Arena *a, const char *line, const CompileRequest *defaults, CompileRequest *r,
                       const JsonValue **id, char *err) {
    return batch_parse_line(a, line, strlen(line), 7, defaults, r, id, err, 256);
}

START_TEST(test_manifest_lines) {
    Arena a;
    arena_init(&a);
    char err[256];
    const JsonValue *id;
    CompileRequest r, defaults = {0};
    ElabOverride defs[] = {{"N", "1"}, {"M", "2"}};
    defaults.vocab = "abc";
    defaults.max_len = "5";
    defaults.defines = defs;
    defaults.n_defines = 2;
    ck_assert(parse_line(&a, "{\"program\": \"p.rasp\", \"max-len\": 3, \"model\": \"m.bin\", \"id\": {\"k\": [1]}}",
                         &defaults, &r, &id, err));
    ck_assert_str_eq(r.program, "p.rasp");
    ck_assert_str_eq(r.model_path, "m.bin");
    ck_assert_str_eq(r.max_len, "3"); /* the line's */
    ck_assert_str_eq(r.vocab, "abc"); /* the default */
    ck_assert(id && id->kind == JSON_OBJECT);
    ck_assert_uint_eq(r.n_defines, 2);
    /* a JSON vocabulary list becomes the --vocab JSON text; defines add to the defaults */
    ck_assert(parse_line(&a, "{\"source\": \"x = tokens;\", \"vocab\": [\"a\", \",\"], \"defines\": {\"N\": 5, "
                             "\"S\": \"\\\"ab\\\"\", \"B\": true}, \"no-selfcheck\": true}", &defaults, &r, &id, err));
    ck_assert_str_eq(r.vocab, "[\"a\", \",\"]");
    ck_assert_str_eq(r.source_name, "<line 7>");
    ck_assert(r.no_selfcheck && !id);
    ck_assert_uint_eq(r.n_defines, 5);
    ck_assert_str_eq(r.defines[2].name, "N");
    ck_assert_str_eq(r.defines[2].value, "5");
    ck_assert_str_eq(r.defines[3].value, "\"ab\"");
    ck_assert_str_eq(r.defines[4].value, "True");
    /* refusals */
    static const char *const bad[][2] = {
        {"[1]", "manifest line 7 is not a JSON object"},
        {"{\"program\": \"p\"", "manifest line 7 is not JSON"},
        {"{\"program\": \"p\", \"vocabb\": \"a\"}", "manifest line 7: unknown key \"vocabb\""},
        {"{\"program\": 3}", "manifest line 7: \"program\" has the wrong type"},
        {"{\"program\": \"p\", \"no-selfcheck\": 1}", "manifest line 7: \"no-selfcheck\" has the wrong type"},
        {"{\"max-len\": 3}", "manifest line 7: give \"program\""},
        {"{\"program\": \"p\", \"source\": \"x\"}", "manifest line 7: give \"program\""},
        {"{\"program\": \"-\"}", "manifest line 7: \"-\""},
        {"{\"program\": \"p\", \"model\": \"-\"}", "manifest line 7: \"-\""},
        {"{\"program\": \"p\", \"defines\": {\"N\": [1]}}", "manifest line 7: \"defines\": the value of N"},
        {"{\"program\": \"p\", \"defines\": [1]}", "manifest line 7: \"defines\" has the wrong type"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        ck_assert_msg(!parse_line(&a, bad[k][0], &defaults, &r, &id, err), "%s accepted", bad[k][0]);
        ck_assert_msg(strncmp(err, bad[k][1], strlen(bad[k][1])) == 0, "%s: %s", bad[k][0], err);
    }
    arena_free(&a);
}
END_TEST

START_TEST(test_batch_run) {
    const char *manifest =
        "{\"id\": \"ok\", \"source\": \"out = aggregate(select(indices, length - indices - 1, ==), tokens);\", "
        "\"max-len\": 3}\n"
        "\n"
        "{\"id\": 2, \"source\": \"out = tokens +;\", \"name\": \"bad.rasp\"}\n"
        "{\"id\": 3, \"program\": \"/nonexistent.rasp\"}\n"
        "nonsense\n"
        "{\"source\": \"N = 1;\\nout = tokens_int + N;\", \"vocab\": \"0..2\", \"defines\": {\"N\": 4}, "
        "\"no-selfcheck\": true}\n";
    FILE *in = fmemopen((void *)manifest, strlen(manifest), "r");
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CompileRequest defaults = {0};
    defaults.vocab = "ab";
    BatchSummary sum;
    batch_run(in, out, &defaults, NULL, &sum);
    fclose(in);
    fclose(out);
    ck_assert_uint_eq(sum.programs, 5);
    ck_assert_uint_eq(sum.failed, 3);
    Arena a;
    arena_init(&a);
    static const struct { size_t line; int status; const char *first_message; } want[] = {
        {1, 0, NULL}, {3, 2, "syntax error"}, {4, 2, "cannot read /nonexistent.rasp"}, {5, 2, "manifest line 5 is not JSON"},
        {6, 0, NULL},
    };
    char *line = text;
    for (size_t k = 0; k < 5; k++) {
        char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        JsonValue *v;
        char err[128];
        ck_assert_msg(json_parse(&a, line, (size_t)(nl - line), &v, err, sizeof err), "line %zu: %s", k, err);
        ck_assert_int_eq((int)json_get(v, "line")->number, (int)want[k].line);
        ck_assert_int_eq((int)json_get(v, "status")->number, want[k].status);
        const JsonValue *msgs = json_get(v, "messages"), *stats = json_get(v, "stats");
        ck_assert(json_get(v, "model")->kind == JSON_NULL);
        if (want[k].status == 0) {
            ck_assert(stats->kind == JSON_OBJECT && msgs->count == 0);
        } else {
            ck_assert(stats->kind == JSON_NULL && msgs->count >= 1);
            const char *m = json_get(&msgs->items[0], "message")->text;
            ck_assert_msg(strncmp(m, want[k].first_message, strlen(want[k].first_message)) == 0, "%s", m);
        }
        line = nl + 1;
    }
    ck_assert_str_eq(line, "");
    /* the located error says where; the id comes back as given */
    JsonValue *v;
    char err[128];
    char *second = strchr(text, '\n') + 1;
    ck_assert(json_parse(&a, second, (size_t)(strchr(second, '\n') - second), &v, err, sizeof err));
    const JsonValue *m0 = &json_get(v, "messages")->items[0];
    ck_assert_str_eq(json_get(m0, "file")->text, "bad.rasp");
    ck_assert_int_eq((int)json_get(m0, "line")->number, 1);
    ck_assert_int_eq((int)json_get(v, "id")->number, 2);
    ck_assert_str_eq(json_get(v, "program")->text, "bad.rasp");
    arena_free(&a);
    free(text);
}
END_TEST

int main(void) {
    Suite *s = suite_create("driver");
    TCase *tc = tcase_create("driver");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_job_compiles_text);
    tcase_add_test(tc, test_job_writes_the_model);
    tcase_add_test(tc, test_job_messages);
    tcase_add_test(tc, test_manifest_lines);
    tcase_add_test(tc, test_batch_run);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
