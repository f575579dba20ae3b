/* rasptestbed: the theory testbed (docs/testbed.md). For each task of the suite (testbed/task.h)
 * and each n, compiles the task's program for that n, runs the model on seeded random instances
 * against answers computed in C, measures it, and writes the results (testbed/report.h).
 *
 * Each (task, n) runs in a child process under an address-space limit and a time limit, so a
 * compile that grows too large stops that task (and is reported) instead of the run. A task
 * stops at the first n that does not complete; its larger n are not tried. This file only
 * parses flags, schedules the children and prints; the work is in testbed/. */
#include <cblas.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/parse.h"
#include "testbed/report.h"
#include "testbed/run.h"
#include "testbed/task.h"

static const char usage_text[] =
    "usage: rasptestbed [--n 8,16,32,64,128,256] [--tasks NAME,...] [--instances K] [--seed S]\n"
    "                   [--out DIR] [--programs DIR] [--jobs J] [--timeout SECONDS] [--mem-gb G]\n"
    "                   [--max-mlp N] [--max-bytes B] [--no-plots] [--check] [--list]\n";

static const char help_text[] =
    "\n"
    "Runs the theory testbed: every task of the suite (docs/testbed.md; --list names them) at\n"
    "every n given, each (task, n) in a child process:\n"
    "  compile   rasp_examples/testbed/TASK.rasp for n (the max-len and vocabulary of the task's\n"
    "            format at n, -D values where the program takes them), through the compiler's C API;\n"
    "  run       K seeded random instances of size n through the compiled model, compared with\n"
    "            the true answer computed in C; failures are attributed to the program or the\n"
    "            compiler by the reference evaluator;\n"
    "  measure   layers, heads, residual width, MLP hidden units, parameters, non-zeros, compile ms.\n"
    "A task stops at the first n that does not compile or run within the limits; larger n are not\n"
    "tried. Writes DIR/results.csv, stops.csv, results.md and plots/*.png (gnuplot), and prints one\n"
    "line per (task, n) and a summary: each program's selection class and each size's growth class.\n"
    "\n"
    "  --n LIST         sizes to try (default 8,16,32,64,128,256)\n"
    "  --tasks LIST     tasks to run (default all)\n"
    "  --instances K    random instances per (task, n) (default 1000)\n"
    "  --seed S         base seed of the instances and of the sparse tasks' positions (default 1)\n"
    "  --out DIR        output folder (default build/testbed)\n"
    "  --programs DIR   where the task programs are (default rasp_examples/testbed)\n"
    "  --jobs J         (task, n) run at once (default 1; progress is shown only with 1)\n"
    "  --timeout S      wall-clock seconds one (task, n) may take (default 1800)\n"
    "  --mem-gb G       address space one (task, n) may use, GiB (default 8; 0: no limit, as\n"
    "                   sanitizer builds need)\n"
    "  --max-mlp N, --max-bytes B   the compiler's limits (raspcc --help); default its own\n"
    "  --no-plots       skip gnuplot\n"
    "  --check          exit 1 unless every (task, n) tried compiled, ran and answered every\n"
    "                   instance right (make check runs the small n this way)\n"
    "  --list           print the tasks and their formats' max-len and vocabulary at n = 8\n"
    "\n"
    "Exit status: 0 done (with --check: and all right), 1 --check failed, 2 bad usage or an\n"
    "output that cannot be written.\n";

typedef struct Options {
    size_t ns[32], n_ns;
    const char *tasks; /* comma list or NULL */
    size_t instances;
    unsigned long long seed;
    const char *out, *programs;
    size_t jobs, timeout, mem_gb, max_mlp, max_bytes;
    bool plots, check, list;
} Options;

static int usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "rasptestbed: %s%s%s\n%s(rasptestbed --help for details)\n", msg, arg ? " " : "", arg ? arg : "",
            usage_text);
    return 2;
}

static bool parse_list(const char *s, Options *o) {
    o->n_ns = 0;
    while (*s) {
        char part[32];
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof part || o->n_ns == sizeof o->ns / sizeof *o->ns) return false;
        memcpy(part, s, len);
        part[len] = '\0';
        if (!parse_size(part, &o->ns[o->n_ns]) || o->ns[o->n_ns] < 4 || o->ns[o->n_ns] > 4096) return false;
        o->n_ns++;
        s += len + (s[len] == ',');
    }
    return o->n_ns > 0;
}

/* Whether name is in the comma list (NULL: every name is). */
static bool in_list(const char *list, const char *name) {
    if (!list) return true;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t part = strcspn(p, ",");
        if (part == len && strncmp(p, name, len) == 0) return true;
        p += part + (p[part] == ',');
    }
    return false;
}

static int parse_args(int argc, char **argv, Options *o) {
    *o = (Options){.instances = 1000, .seed = 1, .out = "build/testbed", .programs = "rasp_examples/testbed",
                   .jobs = 1, .timeout = 1800, .mem_gb = 8, .plots = true};
    parse_list("8,16,32,64,128,256", o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        char name[32];
        const char *eq = strchr(a, '=');
        if (a[0] == '-' && a[1] == '-' && eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            a = name;
            v = eq + 1;
        }
        bool flag = !strcmp(a, "--no-plots") || !strcmp(a, "--check") || !strcmp(a, "--list") ||
                    !strcmp(a, "--help") || !strcmp(a, "-h");
        if (flag && v) return usage_error("option takes no value:", a);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s%s", usage_text, help_text);
            return 0;
        }
        if (!strcmp(a, "--no-plots")) { o->plots = false; continue; }
        if (!strcmp(a, "--check")) { o->check = true; continue; }
        if (!strcmp(a, "--list")) { o->list = true; continue; }
        if (!v) {
            if (i + 1 >= argc) return usage_error("option needs a value:", a);
            v = argv[++i];
        }
        size_t num = 0;
        bool num_ok = parse_size(v, &num);
        if (!strcmp(a, "--n")) {
            if (!parse_list(v, o)) return usage_error("--n needs sizes 4..4096, comma-separated, got", v);
        } else if (!strcmp(a, "--tasks")) {
            o->tasks = v;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--programs")) {
            o->programs = v;
        } else if (!strcmp(a, "--seed")) {
            if (!num_ok) return usage_error("--seed needs a non-negative integer, got", v);
            o->seed = num;
        } else if (!strcmp(a, "--mem-gb")) {
            if (!num_ok) return usage_error("--mem-gb needs a non-negative integer, got", v);
            o->mem_gb = num;
        } else if (!strcmp(a, "--instances") || !strcmp(a, "--jobs") || !strcmp(a, "--timeout") ||
                   !strcmp(a, "--max-mlp") || !strcmp(a, "--max-bytes")) {
            if (!num_ok || num == 0) return usage_error("this option needs a positive integer:", a);
            size_t *dst = !strcmp(a, "--instances") ? &o->instances
                          : !strcmp(a, "--jobs")    ? &o->jobs
                          : !strcmp(a, "--timeout") ? &o->timeout
                          : !strcmp(a, "--max-mlp") ? &o->max_mlp
                                                    : &o->max_bytes;
            *dst = num;
        } else {
            return usage_error("unknown option", a);
        }
    }
    if (o->tasks)
        for (const char *p = o->tasks; *p;) {
            char part[64];
            size_t len = strcspn(p, ",");
            snprintf(part, sizeof part, "%.*s", (int)(len < sizeof part ? len : sizeof part - 1), p);
            if (!tb_task_find(part)) return usage_error("unknown task (--list names them):", part);
            p += len + (p[len] == ',');
        }
    return -1;
}

static void list_tasks(void) {
    size_t count;
    const TbTask *tasks = tb_tasks(&count);
    printf("%-18s %-11s %-8s %s\n", "task", "family", "max-len", "vocab (at n = 8)");
    for (size_t i = 0; i < count; i++) {
        char vocab[32];
        tb_vocab(&tasks[i], 8, vocab, sizeof vocab);
        printf("%-18s %-11s %-8zu %s\n", tasks[i].name, tasks[i].family, tb_max_len(&tasks[i], 8), vocab);
    }
}

/* ---- running one (task, n) in a child ---- */

static void progress_line(void *ctx, const char *task, size_t n, size_t done, size_t total) {
    (void)ctx;
    fprintf(stderr, "\r  %s n=%zu: %zu/%zu instances ", task, n, done, total);
    fflush(stderr);
}

typedef struct Job {
    pid_t pid;
    int fd;
    size_t task, n_index;
    time_t started;
} Job;

static bool start_job(const Options *o, const TbTask *t, size_t n, bool show_progress, Job *job) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        if (o->mem_gb) {
            struct rlimit rl = {(rlim_t)o->mem_gb << 30, (rlim_t)o->mem_gb << 30};
            setrlimit(RLIMIT_AS, &rl);
        }
        alarm((unsigned)o->timeout);
        TbRunOptions ro = {o->programs, o->instances, o->seed, o->max_mlp, o->max_bytes,
                           show_progress ? progress_line : NULL, NULL};
        if (show_progress) fprintf(stderr, "  %s n=%zu: compiling", t->name, n);
        TbResult r;
        tb_run(t, n, &ro, &r);
        if (show_progress) fprintf(stderr, "\r\033[K");
        ssize_t w = write(fds[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    job->pid = pid;
    job->fd = fds[0];
    job->started = time(NULL);
    return true;
}

/* The child's result, or one saying how it died. */
static void finish_job(const Options *o, const TbTask *t, size_t n, Job *job, int status, TbResult *r) {
    ssize_t got = read(job->fd, r, sizeof *r);
    close(job->fd);
    if (got == (ssize_t)sizeof *r) return;
    memset(r, 0, sizeof *r);
    snprintf(r->task, sizeof r->task, "%s", t->name);
    r->n = n;
    r->max_len = tb_max_len(t, n);
    tb_vocab(t, n, r->vocab, sizeof r->vocab);
    r->stage = TB_STAGE_LIMIT;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(r->stop, sizeof r->stop, "over the time limit (%zu s for compiling and %zu instances)", o->timeout,
                 o->instances);
    else if (WIFSIGNALED(status))
        snprintf(r->stop, sizeof r->stop, "the child died of signal %d (%s; the address-space limit is %zu GiB, 0: "
                 "none)", WTERMSIG(status), strsignal(WTERMSIG(status)), o->mem_gb);
    else
        snprintf(r->stop, sizeof r->stop, "the child exited with status %d before reporting",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void print_result(const TbResult *r) {
    if (r->stage != TB_STAGE_DONE) {
        printf("%-16s n=%-4zu stopped: %s\n", r->task, r->n, r->stop);
    } else {
        printf("%-16s n=%-4zu %zu/%zu right  layers %zu  heads %zu  width %zu  mlp %zu  params %zu (%zu non-zero)"
               "  compile %.0f ms  run %.0f ms\n",
               r->task, r->n, r->correct, r->instances, r->layers, r->heads, r->residual_width, r->mlp_hidden,
               r->params, r->nonzero_params, r->compile_ms, r->run_ms);
        if (r->correct != r->instances) printf("    first failure: %s\n", r->first_failure);
    }
    fflush(stdout);
}

static bool make_dirs(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return false;
            *p = '/';
        }
    return mkdir(buf, 0777) == 0 || errno == EEXIST;
}

static char *command_line(int argc, char **argv) {
    size_t len = 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s) abort();
    s[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i) strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

int main(int argc, char **argv) {
    Options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    if (o.list) {
        list_tasks();
        return 0;
    }
    openblas_set_num_threads(1);
    if (!make_dirs(o.out)) {
        fprintf(stderr, "rasptestbed: cannot create %s: %s\n", o.out, strerror(errno));
        return 2;
    }
    size_t n_tasks;
    const TbTask *tasks = tb_tasks(&n_tasks);
    /* per task: the next n to try (index into o.ns), or o.n_ns when done or stopped */
    size_t *next = calloc(n_tasks, sizeof *next);
    bool *busy = calloc(n_tasks, sizeof *busy);
    TbResult *results = malloc(n_tasks * o.n_ns * sizeof *results);
    Job *jobs = calloc(o.jobs, sizeof *jobs);
    if (!next || !busy || !results || !jobs) abort();
    for (size_t t = 0; t < n_tasks; t++)
        if (!in_list(o.tasks, tasks[t].name)) next[t] = o.n_ns;
    size_t n_results = 0, running = 0;
    bool show_progress = o.jobs == 1 && isatty(2);
    char *cmd = command_line(argc, argv);
    char when[256];
    time_t now = time(NULL);
    struct utsname un;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    if (uname(&un) == 0) snprintf(when + strlen(when), sizeof when - strlen(when), ", %.40s %.40s", un.machine, un.sysname);
    TbRunInfo info = {o.instances, o.seed, cmd, when};
    char err[512], plot_err[512] = "";
    for (;;) {
        for (size_t t = 0; t < n_tasks && running < o.jobs; t++) {
            if (busy[t] || next[t] >= o.n_ns) continue;
            size_t slot = 0;
            while (jobs[slot].pid) slot++;
            if (!start_job(&o, &tasks[t], o.ns[next[t]], show_progress, &jobs[slot])) {
                fprintf(stderr, "rasptestbed: cannot start a child: %s\n", strerror(errno));
                return 2;
            }
            jobs[slot].task = t;
            jobs[slot].n_index = next[t];
            busy[t] = true;
            running++;
        }
        if (running == 0) break;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) break;
        size_t slot = 0;
        while (slot < o.jobs && jobs[slot].pid != pid) slot++;
        if (slot == o.jobs) continue;
        size_t t = jobs[slot].task;
        TbResult *r = &results[n_results++];
        finish_job(&o, &tasks[t], o.ns[jobs[slot].n_index], &jobs[slot], status, r);
        jobs[slot].pid = 0;
        running--;
        busy[t] = false;
        next[t] = r->stage == TB_STAGE_DONE ? next[t] + 1 : o.n_ns;
        print_result(r);
        if (!tb_write_tables(o.out, results, n_results, &info, err, sizeof err)) {
            fprintf(stderr, "rasptestbed: %s\n", err);
            return 2;
        }
    }
    printf("\nsummary (class; largest n reached and the lowest accuracy there; growth of each size):\n");
    tb_write_summary(stdout, results, n_results);
    bool plotted = o.plots && tb_write_plots(o.out, results, n_results, plot_err, sizeof plot_err);
    if (o.plots && !plotted) fprintf(stderr, "rasptestbed: plots: %s\n", plot_err);
    printf("\nwritten: %s/results.csv, stops.csv, results.md%s\n", o.out, plotted ? ", plots/*.png" : "");
    bool all_right = true;
    for (size_t i = 0; i < n_results; i++)
        all_right &= results[i].stage == TB_STAGE_DONE && results[i].correct == results[i].instances;
    free(next);
    free(busy);
    free(results);
    free(jobs);
    free(cmd);
    return o.check && !all_right ? 1 : 0;
}
