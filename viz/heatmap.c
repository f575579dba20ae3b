#include "viz/heatmap.h"

#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "viz/font.h"

enum {
    MARGIN = 8, GAP = 12, LABEL_CHARS = 32, LINE = 14, /* a text line: the font and 3 px */
    LABELLED_ROW = 12, MAX_LABELLED_DIMS = 320, TALL = 3840,
};
#define MAX_PIXELS (64.0 * 1024 * 1024)

typedef struct Canvas {
    uint8_t *rgb; /* w x h x 3 */
    size_t w, h;
} Canvas;

static void fill(Canvas *c, size_t x, size_t y, size_t w, size_t h, const uint8_t color[3]) {
    for (size_t j = y; j < y + h && j < c->h; j++)
        for (size_t i = x; i < x + w && i < c->w; i++) memcpy(c->rgb + 3 * (j * c->w + i), color, 3);
}

/* Text from (x, y), at most max_chars characters (a cut-off one ends in '~'). */
static void text(Canvas *c, size_t x, size_t y, const char *s, size_t max_chars) {
    static const uint8_t ink[3] = {0x20, 0x20, 0x20};
    size_t len = strlen(s);
    for (size_t k = 0; k < len && k < max_chars; k++) {
        unsigned char ch = (unsigned char)(k + 1 == max_chars && len > max_chars ? '~' : s[k]);
        if (ch < VIZ_FONT_FIRST || ch >= VIZ_FONT_FIRST + VIZ_FONT_CHARS) ch = '?';
        const unsigned char *g = viz_font_glyphs[ch - VIZ_FONT_FIRST];
        for (size_t r = 0; r < VIZ_FONT_HEIGHT; r++)
            for (size_t b = 0; b < VIZ_FONT_WIDTH; b++)
                if (g[r] >> (VIZ_FONT_WIDTH - 1 - b) & 1) fill(c, x + k * VIZ_FONT_WIDTH + b, y + r, 1, 1, ink);
    }
}

/* Diverging: t in [-1, 1] -> blue .. white .. red. */
static void shade(double t, uint8_t rgb[3]) {
    if (!(t == t)) t = 0; /* NaN */
    t = t > 1 ? 1 : t < -1 ? -1 : t;
    uint8_t fade = (uint8_t)lround(255.0 * (1.0 - fabs(t)));
    if (t >= 0) rgb[0] = 255, rgb[1] = fade, rgb[2] = fade;
    else rgb[0] = fade, rgb[1] = fade, rgb[2] = 255;
}

typedef struct PngError {
    char *err;
    size_t size;
} PngError;

static void on_png_error(png_structp png, png_const_charp msg) {
    PngError *e = png_get_error_ptr(png);
    snprintf(e->err, e->size, "libpng: %s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* The canvas as an 8-bit RGB PNG. Nothing here changes after setjmp, so longjmp is safe. */
static bool write_png(FILE *out, const Canvas *c, char *err, size_t errsize) {
    PngError e = {err, errsize};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &e, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        snprintf(err, errsize, "libpng: out of memory");
        png_destroy_write_struct(&png, NULL);
        return false;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_init_io(png, out);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_text meta = {.compression = PNG_TEXT_COMPRESSION_NONE, .key = "Software", .text = "rasprun --trace-png"};
    png_set_text(png, info, &meta, 1);
    png_write_info(png, info);
    for (size_t y = 0; y < c->h; y++) png_write_row(png, c->rgb + 3 * y * c->w);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fflush(out) != 0 || ferror(out)) {
        snprintf(err, errsize, "write error");
        return false;
    }
    return true;
}

static const char *label_of(const Model *m, size_t d) { return m->labels && m->labels[d] ? m->labels[d] : ""; }

/* A column's heading: "BOS", or the token as printed (a string without quotes). */
static void heading(const VizTrace *t, const Value *input, size_t c, char *buf, size_t size) {
    (void)t;
    if (c == 0) snprintf(buf, size, "BOS");
    else if (input[c - 1].kind == VAL_STR) snprintf(buf, size, "%s", input[c - 1].as.s);
    else value_format(input[c - 1], buf, size);
}

void viz_heatmap_layout(const Model *m, const VizTrace *t, const Value *input, VizHeatmapLayout *out) {
    VizHeatmapLayout L = {0};
    size_t D = t->d, cols = t->n + 1;
    L.row_h = D <= MAX_LABELLED_DIMS ? LABELLED_ROW : TALL / D;
    if (L.row_h < 1) L.row_h = 1;
    L.head_chars = 3; /* "BOS"; a token heading up to 4 characters */
    for (size_t c = 1; c < cols; c++) {
        char buf[64];
        heading(t, input, c, buf, sizeof buf);
        size_t len = strlen(buf) > 4 ? 4 : strlen(buf);
        L.head_chars = len > L.head_chars ? len : L.head_chars;
    }
    L.cell_w = L.head_chars * VIZ_FONT_WIDTH + 8;
    if (L.row_h >= LABELLED_ROW) {
        L.label_chars = 4;
        for (size_t d = 0; d < D; d++) {
            size_t len = strlen(label_of(m, d));
            L.label_chars = len > L.label_chars ? len : L.label_chars;
        }
        if (L.label_chars > LABEL_CHARS) L.label_chars = LABEL_CHARS;
    }
    size_t label_w = L.label_chars ? L.label_chars * VIZ_FONT_WIDTH + GAP : 0, panel_w = cols * L.cell_w;
    L.panel_x = MARGIN + label_w;
    L.panel_step = panel_w + GAP;
    L.top = MARGIN + 2 * LINE;
    L.width = L.panel_x + t->n_stages * L.panel_step - GAP + MARGIN;
    L.height = L.top + D * L.row_h + LINE + 2 * MARGIN;
    *out = L;
}

bool viz_heatmap_write(FILE *out, const Model *m, const ResidualLayout *L, const VizTrace *t, const Value *input,
                       char *err, size_t errsize) {
    size_t D = t->d, cols = t->n + 1;
    VizHeatmapLayout G;
    viz_heatmap_layout(m, t, input, &G);
    if ((double)G.width * (double)G.height > MAX_PIXELS) {
        snprintf(err, errsize, "the picture would have %zu x %zu pixels (residual width %zu, %zu stages); the limit "
                 "is %.0f million", G.width, G.height, D, t->n_stages, MAX_PIXELS / 1048576);
        return false;
    }
    Canvas cv = {malloc(G.width * G.height * 3), G.width, G.height};
    double *scale = calloc(D ? D : 1, sizeof *scale);
    if (!cv.rgb || !scale) abort();
    memset(cv.rgb, 255, G.width * G.height * 3);
    static const uint8_t frame[3] = {0x99, 0x99, 0x99}, rule[3] = {0xcc, 0xcc, 0xcc};
    /* each dim's scale: its largest |value| anywhere in the trace */
    for (size_t s = 0; s < t->n_stages; s++)
        for (size_t r = 0; r < cols; r++)
            for (size_t d = 0; d < D; d++) {
                double v = fabs(viz_trace_row(t, s, r)[d]);
                if (v > scale[d]) scale[d] = v;
            }
    for (size_t d = 0; d < D && G.label_chars; d++)
        text(&cv, MARGIN, G.top + d * G.row_h + (G.row_h - VIZ_FONT_HEIGHT) / 2, label_of(m, d), G.label_chars);
    size_t panel_w = cols * G.cell_w, body_h = D * G.row_h;
    for (size_t s = 0; s < t->n_stages; s++) {
        size_t x0 = G.panel_x + s * G.panel_step;
        char title[64];
        if (s == 0) snprintf(title, sizeof title, "embedding");
        else snprintf(title, sizeof title, "layer %zu", s - 1);
        text(&cv, x0, MARGIN, title, panel_w / VIZ_FONT_WIDTH);
        for (size_t c = 0; c < cols; c++) { /* centred over its column */
            char head[64];
            heading(t, input, c, head, sizeof head);
            size_t len = strlen(head) < G.head_chars ? strlen(head) : G.head_chars;
            text(&cv, x0 + c * G.cell_w + (G.cell_w - len * VIZ_FONT_WIDTH) / 2, MARGIN + LINE, head, G.head_chars);
        }
        for (size_t r = 0; r < cols; r++)
            for (size_t d = 0; d < D; d++) {
                uint8_t rgb[3];
                double v = viz_trace_row(t, s, r)[d];
                shade(scale[d] > 0 ? v / scale[d] : 0, rgb);
                fill(&cv, x0 + r * G.cell_w, G.top + d * G.row_h, G.cell_w, G.row_h, rgb);
            }
        for (size_t b = 1; b < L->n_blocks && G.row_h >= 3; b++)
            fill(&cv, x0, G.top + L->blocks[b].dim * G.row_h, panel_w, 1, rule);
        fill(&cv, x0, G.top - 1, panel_w, 1, frame);
        fill(&cv, x0, G.top + body_h, panel_w, 1, frame);
        fill(&cv, x0 - 1, G.top - 1, 1, body_h + 2, frame);
        fill(&cv, x0 + panel_w, G.top - 1, 1, body_h + 2, frame);
    }
    const char *legend = "red > 0, blue < 0, white 0; each row scaled by its largest |value|";
    text(&cv, MARGIN, G.top + body_h + MARGIN, legend, (G.width - 2 * MARGIN) / VIZ_FONT_WIDTH);
    bool ok = write_png(out, &cv, err, errsize);
    free(cv.rgb);
    free(scale);
    return ok;
}
