#include "support/term.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

bool term_is_tty(FILE *f) { return f && isatty(fileno(f)); }

bool term_use_color(FILE *f) {
    const char *no = getenv("NO_COLOR");
    return term_is_tty(f) && !(no && *no);
}

double term_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "\r" then erase to the end of the line (VT100, which every terminal emulator speaks). */
static void erase_line(FILE *out) {
    fputs("\r\033[K", out);
    fflush(out);
}

void progress_start(Progress *p, FILE *out, bool on, const char *label) {
    *p = (Progress){out, on && out, label ? label : "", -1};
}

void progress_update(Progress *p, size_t done, size_t total) {
    if (!p->on || total == 0) return;
    if (done > total) done = total;
    int pct = (int)(100.0 * (double)done / (double)total);
    if (pct == p->shown) return;
    p->shown = pct;
    enum { WIDTH = 40 };
    int bar = pct * WIDTH / 100;
    fprintf(p->out, "\r%s%s[%.*s%*s] %3d%%", p->label, *p->label ? " " : "", bar,
            "########################################", WIDTH - bar, "", pct);
    fflush(p->out);
}

void progress_end(Progress *p) {
    if (p->on && p->shown >= 0) erase_line(p->out);
    p->shown = -1;
}

static int ticker_main(void *arg) {
    Ticker *t = arg;
    mtx_lock(&t->lock);
    while (!t->stop) {
        double now = term_now();
        if (now - t->start >= t->delay) {
            fprintf(t->out, "\r%s %.1f s", t->label, now - t->start);
            fflush(t->out);
            t->drawn = true;
        }
        struct timespec until;
        timespec_get(&until, TIME_UTC);
        until.tv_nsec += 100000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        cnd_timedwait(&t->wake, &t->lock, &until);
    }
    mtx_unlock(&t->lock);
    return 0;
}

void ticker_start(Ticker *t, FILE *out, bool on, const char *label, double delay) {
    *t = (Ticker){.out = out, .label = label, .delay = delay, .start = term_now()};
    if (!on || !out) return;
    if (mtx_init(&t->lock, mtx_plain) != thrd_success) return;
    if (cnd_init(&t->wake) != thrd_success) {
        mtx_destroy(&t->lock);
        return;
    }
    t->on = true;
    t->running = thrd_create(&t->thread, ticker_main, t) == thrd_success;
}

void ticker_stop(Ticker *t) {
    if (!t->on) return;
    if (t->running) {
        mtx_lock(&t->lock);
        t->stop = true;
        cnd_signal(&t->wake);
        mtx_unlock(&t->lock);
        thrd_join(t->thread, NULL);
    }
    if (t->drawn) erase_line(t->out);
    cnd_destroy(&t->wake);
    mtx_destroy(&t->lock);
    t->on = false;
}
