/* The testbed's outputs, from the results of every (task, n) tried:
 *   results.csv   task,n,instances,accuracy,layers,heads,residual_width,mlp_hidden,params,
 *                 nonzero_params,compile_ms (one row per (task, n) that compiled and ran;
 *                 accuracy a fraction; heads and mlp_hidden summed over layers)
 *   stops.csv     task,n,stage,reason: where each task stopped (compile refused, a limit, ...)
 *   results.md    the same as Markdown tables, where each task stops, the selection class of
 *                 each program and the growth class of each size
 *   plots/        gnuplot data, a script, and one PNG per size against n (one line per task)
 * Results are given in any order; tables follow the suite's order (task.h), then n. */
#ifndef RASPCC_TESTBED_REPORT_H
#define RASPCC_TESTBED_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "testbed/growth.h"
#include "testbed/run.h"

typedef enum TbMetric {
    TB_M_LAYERS, TB_M_HEADS, TB_M_WIDTH, TB_M_MLP, TB_M_PARAMS, TB_M_NONZERO, TB_METRICS
} TbMetric;

const char *tb_metric_column(TbMetric m); /* the CSV column: "layers", "residual_width", ... */
const char *tb_metric_title(TbMetric m);  /* for tables and plots: "residual width", ... */
double tb_metric_value(const TbResult *r, TbMetric m);

/* The growth class of a metric over the completed results of one task. */
TbGrowthFit tb_task_growth(const TbResult *rs, size_t count, const char *task, TbMetric m);

/* How the run was made, for the headers. */
typedef struct TbRunInfo {
    size_t instances;
    unsigned long long seed;
    const char *command; /* the command line */
    const char *when;    /* date and machine */
} TbRunInfo;

void tb_write_csv(FILE *f, const TbResult *rs, size_t count);
void tb_write_stops_csv(FILE *f, const TbResult *rs, size_t count);
void tb_write_markdown(FILE *f, const TbResult *rs, size_t count, const TbRunInfo *info);
/* One line per task: its class, the n it reached, where it stops, and the growth classes. */
void tb_write_summary(FILE *f, const TbResult *rs, size_t count);

/* Writes dir/plots/{TASK.dat, sizes.gp} and runs gnuplot there, which writes one PNG per
 * metric. Returns false with a reason (gnuplot missing or failing) in err; the data and the
 * script are written either way. */
bool tb_write_plots(const char *dir, const TbResult *rs, size_t count, char *err, size_t errsize);

/* Writes results.csv, stops.csv and results.md into dir (which must exist). Returns false with a
 * reason when a file cannot be written. */
bool tb_write_tables(const char *dir, const TbResult *rs, size_t count, const TbRunInfo *info, char *err,
                     size_t errsize);

#endif
