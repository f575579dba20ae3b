/* Terminal conventions shared by the command-line tools.
 *
 * Colour only on a terminal, and never when the environment sets NO_COLOR to a non-empty
 * value (https://no-color.org). Progress is drawn only where the caller says (a terminal, not
 * -q): pipes and logs get nothing, so a tool's output stays the same whether or not a human
 * watches. Progress lines redraw in place with '\r' and are erased when the work ends, so what
 * follows starts on a clean line. */
#ifndef RASPCC_SUPPORT_TERM_H
#define RASPCC_SUPPORT_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <threads.h>

bool term_is_tty(FILE *f);
/* term_is_tty(f) and NO_COLOR unset or empty. */
bool term_use_color(FILE *f);

/* A determinate progress bar: "LABEL [#####               ]  25%" on `out`. */
typedef struct Progress {
    FILE *out;
    bool on;           /* draw at all */
    const char *label;
    int shown;         /* the percentage last drawn, -1 before the first */
} Progress;

/* on: whether to draw (typically term_is_tty(out) && !quiet). label may be "". */
void progress_start(Progress *p, FILE *out, bool on, const char *label);
/* Redraws when the whole percentage changes; total 0 draws nothing. */
void progress_update(Progress *p, size_t done, size_t total);
/* Erases the bar (if it was drawn). */
void progress_end(Progress *p);

/* An indeterminate indicator for work that cannot count its steps (a compile): once `delay`
 * seconds have passed, "LABEL 3.2 s" on `out`, redrawn every tenth of a second by a helper
 * thread until ticker_stop, which erases it. Nothing is drawn for work that ends sooner, and the
 * caller must not write to `out` between start and stop. */
typedef struct Ticker {
    FILE *out;
    const char *label;
    double delay, start;
    bool on, running, stop, drawn;
    thrd_t thread;
    mtx_t lock;
    cnd_t wake;
} Ticker;

void ticker_start(Ticker *t, FILE *out, bool on, const char *label, double delay);
void ticker_stop(Ticker *t);

/* Seconds on a monotonic clock. */
double term_now(void);

#endif
