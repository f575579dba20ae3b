/* CSV, Markdown and gnuplot outputs of the testbed (report.h). */
#include "testbed/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

const char *tb_metric_column(TbMetric m) {
    static const char *const names[TB_METRICS] = {"layers", "heads", "residual_width", "mlp_hidden", "params",
                                                  "nonzero_params"};
    return names[m];
}

const char *tb_metric_title(TbMetric m) {
    static const char *const names[TB_METRICS] = {"layers", "heads", "residual width", "MLP hidden", "params",
                                                  "non-zero params"};
    return names[m];
}

double tb_metric_value(const TbResult *r, TbMetric m) {
    switch (m) {
    case TB_M_LAYERS: return (double)r->layers;
    case TB_M_HEADS: return (double)r->heads;
    case TB_M_WIDTH: return (double)r->residual_width;
    case TB_M_MLP: return (double)r->mlp_hidden;
    case TB_M_PARAMS: return (double)r->params;
    case TB_M_NONZERO: return (double)r->nonzero_params;
    default: return 0;
    }
}

/* The results in report order: the suite's task order, then n. */
static const TbResult **ordered(const TbResult *rs, size_t count) {
    const TbResult **o = malloc((count ? count : 1) * sizeof *o);
    if (!o) abort();
    size_t k = 0, n_tasks;
    const TbTask *tasks = tb_tasks(&n_tasks);
    for (size_t t = 0; t < n_tasks; t++) {
        size_t first = k;
        for (size_t i = 0; i < count; i++)
            if (strcmp(rs[i].task, tasks[t].name) == 0) o[k++] = &rs[i];
        for (size_t i = first + 1; i < k; i++) /* insertion sort by n */
            for (size_t j = i; j > first && o[j - 1]->n > o[j]->n; j--) {
                const TbResult *x = o[j];
                o[j] = o[j - 1];
                o[j - 1] = x;
            }
    }
    return o;
}

static double accuracy(const TbResult *r) {
    return r->instances ? (double)r->correct / (double)r->instances : 0;
}

TbGrowthFit tb_task_growth(const TbResult *rs, size_t count, const char *task, TbMetric m) {
    double *n = malloc((count ? count : 1) * sizeof *n), *y = malloc((count ? count : 1) * sizeof *y);
    if (!n || !y) abort();
    size_t k = 0;
    for (size_t i = 0; i < count; i++)
        if (rs[i].stage == TB_STAGE_DONE && strcmp(rs[i].task, task) == 0) {
            n[k] = (double)rs[i].n;
            y[k++] = tb_metric_value(&rs[i], m);
        }
    TbGrowthFit fit = tb_growth_fit(n, y, k);
    free(n);
    free(y);
    return fit;
}

void tb_write_csv(FILE *f, const TbResult *rs, size_t count) {
    fprintf(f, "task,n,instances,accuracy,layers,heads,residual_width,mlp_hidden,params,nonzero_params,compile_ms\n");
    const TbResult **o = ordered(rs, count);
    for (size_t i = 0; i < count; i++) {
        const TbResult *r = o[i];
        if (r->stage != TB_STAGE_DONE) continue;
        fprintf(f, "%s,%zu,%zu,%.4f,%zu,%zu,%zu,%zu,%zu,%zu,%.1f\n", r->task, r->n, r->instances, accuracy(r),
                r->layers, r->heads, r->residual_width, r->mlp_hidden, r->params, r->nonzero_params, r->compile_ms);
    }
    free(o);
}

static const char *stage_name(TbStage s) {
    switch (s) {
    case TB_STAGE_DONE: return "done";
    case TB_STAGE_LOAD: return "load";
    case TB_STAGE_COMPILE: return "compile";
    case TB_STAGE_RUN: return "run";
    case TB_STAGE_LIMIT: return "limit";
    }
    return "?";
}

/* A CSV field: quoted, with inner quotes doubled. */
static void csv_field(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void tb_write_stops_csv(FILE *f, const TbResult *rs, size_t count) {
    fprintf(f, "task,n,stage,reason\n");
    const TbResult **o = ordered(rs, count);
    for (size_t i = 0; i < count; i++) {
        if (o[i]->stage == TB_STAGE_DONE) continue;
        fprintf(f, "%s,%zu,%s,", o[i]->task, o[i]->n, stage_name(o[i]->stage));
        csv_field(f, o[i]->stop);
        fputc('\n', f);
    }
    free(o);
}

/* A Markdown cell: '|' escaped, newlines dropped. */
static void md_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s != '\n') fputc(*s, f);
    }
}

/* A count with thousands separators. */
static void md_count(FILE *f, size_t v) {
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%zu", v);
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) fputc(',', f);
        fputc(digits[i], f);
    }
}

static const char *selects_text(const TbClassification *c, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = TB_SEL_KINDS - 1; k >= 0; k--)
        if (c->selects[k] && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%zu %s", used ? ", " : "", c->selects[k],
                                     tb_select_kind_name((TbSelectKind)k));
    if (!used) snprintf(buf, size, "none");
    return buf;
}

/* Per task: the last completed result, the first stopped one, the one whose classification is
 * shown (the last completed, else the first) and the lowest accuracy. */
typedef struct TaskSummary {
    const TbResult *last_done, *stopped, *any;
    double min_accuracy;
} TaskSummary;

static TaskSummary summarize(const TbResult **o, size_t count, const char *task) {
    TaskSummary s = {NULL, NULL, NULL, 1.0};
    for (size_t i = 0; i < count; i++) {
        if (strcmp(o[i]->task, task) != 0) continue;
        /* the classification comes from a child that finished (one killed at a limit has none) */
        if (!s.any || o[i]->stage == TB_STAGE_DONE) s.any = o[i];
        if (o[i]->stage == TB_STAGE_DONE) {
            s.last_done = o[i];
            if (accuracy(o[i]) < s.min_accuracy) s.min_accuracy = accuracy(o[i]);
        } else if (!s.stopped) {
            s.stopped = o[i];
        }
    }
    return s;
}

static void growth_cell(FILE *f, TbGrowthFit g) {
    fprintf(f, "%s%s", g.fits || g.cls == TB_GROWTH_TOO_FEW ? "" : "~", tb_growth_name(g.cls));
}

void tb_write_markdown(FILE *f, const TbResult *rs, size_t count, const TbRunInfo *info) {
    const TbResult **o = ordered(rs, count);
    fprintf(f, "# Theory testbed results\n\n");
    if (info->command) fprintf(f, "Command: `%s`", info->command);
    if (info->when) fprintf(f, " (%s)", info->when);
    fprintf(f, ". Seed %llu, %zu random instances per (task, n).\n\n", info->seed, info->instances);
    fprintf(f, "## Accuracy and size\n\n");
    fprintf(f, "| task | n | max-len | instances | accuracy | layers | heads | residual | MLP hidden | params | "
               "non-zero | compile ms |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < count; i++) {
        const TbResult *r = o[i];
        fprintf(f, "| %s | %zu | %zu | ", r->task, r->n, r->max_len);
        if (r->stage != TB_STAGE_DONE) {
            fprintf(f, "stopped (%s): ", stage_name(r->stage));
            md_text(f, r->stop);
            fprintf(f, " | | | | | | | | |\n");
            continue;
        }
        fprintf(f, "%zu | %.4f | %zu | %zu | ", r->instances, accuracy(r), r->layers, r->heads);
        md_count(f, r->residual_width);
        fputs(" | ", f);
        md_count(f, r->mlp_hidden);
        fputs(" | ", f);
        md_count(f, r->params);
        fputs(" | ", f);
        md_count(f, r->nonzero_params);
        fprintf(f, " | %.1f |\n", r->compile_ms);
    }
    fprintf(f, "\n## Failures\n\n");
    bool any_failure = false;
    for (size_t i = 0; i < count; i++) {
        const TbResult *r = o[i];
        if (r->stage != TB_STAGE_DONE || r->correct == r->instances) continue;
        any_failure = true;
        fprintf(f, "* %s at n = %zu: %zu of %zu wrong (%zu model errors; of the first %d attributed: %zu program "
                   "wrong, %zu compiler wrong); first: ",
                r->task, r->n, r->instances - r->correct, r->instances, r->model_errors, TB_ATTRIBUTE_MAX,
                r->program_wrong, r->compiler_wrong);
        md_text(f, r->first_failure);
        fputc('\n', f);
    }
    if (!any_failure) fprintf(f, "None: every instance of every (task, n) that ran was answered right.\n");

    fprintf(f, "\n## Selection class, reach and growth\n\n");
    fprintf(f, "Growth classes are fitted over the n each task reached (testbed/growth.h); ~ marks a best fit "
               "that is still more than %.0f%% off.\n\n", TB_GROWTH_TOL * 100);
    fprintf(f, "| task | class | selects | largest n | stops at | layers | heads | residual | MLP hidden | params "
               "| non-zero |\n|---|---|---|--:|---|---|---|---|---|---|---|\n");
    size_t n_tasks;
    const TbTask *tasks = tb_tasks(&n_tasks);
    for (size_t t = 0; t < n_tasks; t++) {
        TaskSummary s = summarize(o, count, tasks[t].name);
        if (!s.any) continue;
        char sel[256];
        fprintf(f, "| %s | %s | %s | ", tasks[t].name, tb_class_name(s.any->classification.cls),
                selects_text(&s.any->classification, sel, sizeof sel));
        if (s.last_done) fprintf(f, "%zu", s.last_done->n);
        else fputs("none", f);
        fputs(" | ", f);
        if (s.stopped) {
            fprintf(f, "%zu: ", s.stopped->n);
            md_text(f, s.stopped->stop);
        } else {
            fputs("—", f);
        }
        for (int m = 0; m < TB_METRICS; m++) {
            fputs(" | ", f);
            growth_cell(f, tb_task_growth(rs, count, tasks[t].name, (TbMetric)m));
        }
        fputs(" |\n", f);
    }
    free(o);
}

void tb_write_summary(FILE *f, const TbResult *rs, size_t count) {
    const TbResult **o = ordered(rs, count);
    size_t n_tasks;
    const TbTask *tasks = tb_tasks(&n_tasks);
    for (size_t t = 0; t < n_tasks; t++) {
        TaskSummary s = summarize(o, count, tasks[t].name);
        if (!s.any) continue;
        fprintf(f, "%-16s %-17s", tasks[t].name, tb_class_name(s.any->classification.cls));
        if (s.last_done) fprintf(f, " n<=%-4zu acc %.4f", s.last_done->n, s.min_accuracy);
        else fprintf(f, " n<=none          ");
        for (int m = 0; m < TB_METRICS; m++) {
            if (m == TB_M_HEADS || m == TB_M_PARAMS) continue;
            fprintf(f, "  %s: ", tb_metric_column((TbMetric)m));
            growth_cell(f, tb_task_growth(rs, count, tasks[t].name, (TbMetric)m));
        }
        if (s.stopped) fprintf(f, "  | stops at n=%zu: %s", s.stopped->n, s.stopped->stop);
        fputc('\n', f);
    }
    free(o);
}

static bool make_dir(const char *path, char *err, size_t errsize) {
    if (mkdir(path, 0777) == 0 || errno == EEXIST) return true;
    snprintf(err, errsize, "cannot create %s: %s", path, strerror(errno));
    return false;
}

/* Runs gnuplot on the script in dir; false with a reason. */
static bool run_gnuplot(const char *dir, char *err, size_t errsize) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot sizes.gp 2> gnuplot.log", dir);
    if (system("command -v gnuplot > /dev/null 2>&1") != 0) {
        snprintf(err, errsize, "gnuplot not found (Debian: apt-get install gnuplot-nox); the data and "
                               "%s/sizes.gp are written", dir);
        return false;
    }
    int rc = system(cmd);
    if (rc != 0) {
        snprintf(err, errsize, "gnuplot failed (exit %d); see %s/gnuplot.log", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1,
                 dir);
        return false;
    }
    return true;
}

bool tb_write_plots(const char *dir, const TbResult *rs, size_t count, char *err, size_t errsize) {
    char path[4096];
    snprintf(path, sizeof path, "%s/plots", dir);
    if (!make_dir(path, err, errsize)) return false;
    const TbResult **o = ordered(rs, count);
    size_t n_tasks;
    const TbTask *tasks = tb_tasks(&n_tasks);
    bool *plotted = calloc(n_tasks, sizeof *plotted);
    if (!plotted) abort();
    for (size_t t = 0; t < n_tasks; t++) {
        snprintf(path, sizeof path, "%s/plots/%s.dat", dir, tasks[t].name);
        FILE *f = NULL;
        for (size_t i = 0; i < count; i++) {
            const TbResult *r = o[i];
            if (r->stage != TB_STAGE_DONE || strcmp(r->task, tasks[t].name) != 0) continue;
            if (!f && !(f = fopen(path, "w"))) {
                snprintf(err, errsize, "cannot write %s: %s", path, strerror(errno));
                free(o);
                free(plotted);
                return false;
            }
            if (!plotted[t]) fprintf(f, "# n layers heads residual_width mlp_hidden params nonzero_params\n");
            plotted[t] = true;
            fprintf(f, "%zu %zu %zu %zu %zu %zu %zu\n", r->n, r->layers, r->heads, r->residual_width, r->mlp_hidden,
                    r->params, r->nonzero_params);
        }
        if (f) fclose(f);
    }
    snprintf(path, sizeof path, "%s/plots/sizes.gp", dir);
    FILE *g = fopen(path, "w");
    if (!g) {
        snprintf(err, errsize, "cannot write %s: %s", path, strerror(errno));
        free(o);
        free(plotted);
        return false;
    }
    fprintf(g, "# The testbed's sizes against n, one PNG per size, one line per task (written by rasptestbed).\n"
               /* noenhanced: task names keep their underscores (no subscripts); the x range
                  leaves room for the last tic's label */
               "set terminal pngcairo size 1200,760 font ',10' noenhanced\n"
               "set logscale xy 2\nset format y '%%.0s%%c'\nset xtics (8, 16, 32, 64, 128, 256)\n"
               "set xrange [7:300]\n"
               "set xlabel 'n'\nset grid\nset key outside right top\n");
    for (int m = 0; m < TB_METRICS; m++) {
        fprintf(g, "\nset output '%s.png'\nset title '%s against n'\nset ylabel '%s'\nplot \\\n",
                tb_metric_column((TbMetric)m), tb_metric_title((TbMetric)m), tb_metric_title((TbMetric)m));
        bool first = true;
        for (size_t t = 0; t < n_tasks; t++) {
            if (!plotted[t]) continue;
            /* dash types cycle with the colours so that 22 lines stay apart */
            fprintf(g, "%s  '%s.dat' using 1:%d with linespoints dt %zu title '%s'", first ? "" : ", \\\n",
                    tasks[t].name, m + 2, t / 8 + 1, tasks[t].name);
            first = false;
        }
        if (first) fprintf(g, "  1/0 notitle");
        fputs("\n", g);
    }
    fclose(g);
    free(o);
    free(plotted);
    snprintf(path, sizeof path, "%s/plots", dir);
    return run_gnuplot(path, err, errsize);
}

static bool write_file(const char *dir, const char *name, void (*write)(FILE *, const TbResult *, size_t),
                       const TbResult *rs, size_t count, char *err, size_t errsize) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errsize, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    write(f, rs, count);
    return fclose(f) == 0;
}

bool tb_write_tables(const char *dir, const TbResult *rs, size_t count, const TbRunInfo *info, char *err,
                     size_t errsize) {
    if (!write_file(dir, "results.csv", tb_write_csv, rs, count, err, errsize) ||
        !write_file(dir, "stops.csv", tb_write_stops_csv, rs, count, err, errsize))
        return false;
    char path[4096];
    snprintf(path, sizeof path, "%s/results.md", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errsize, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    tb_write_markdown(f, rs, count, info);
    return fclose(f) == 0;
}
