/* libFuzzer target: rasprun --trace and --trace-png on any model the reader accepts. The residual
 * labels come from the file, so their parsing into blocks (viz/residual.h), the decoded trace and
 * the picture must never crash, whatever the labels and weights say. Reads use the small
 * expansion limits of fuzz_model.c; only models of short maximum length are run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/model_io.h"
#include "viz/heatmap.h"
#include "viz/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Model m;
    char err[512];
    ModelReadOptions opt = {false, (uint64_t)1 << 16, (uint64_t)1 << 19};
    if (!model_read_buffer_opts(data, size, &opt, &m, err, sizeof err)) return 0;
    Arena a;
    arena_init(&a);
    ResidualLayout L;
    residual_layout(&a, &m, &L);
    for (size_t b = 0; b < L.n_blocks; b++) /* blocks cover the dims in order */
        if (L.blocks[b].count == 0 || (b && L.blocks[b].dim != L.blocks[b - 1].dim + L.blocks[b - 1].count)) abort();
    Workspace ws;
    if (m.max_len <= 16 && workspace_init(&ws, &m, err, sizeof err)) {
        size_t n = m.max_len < 3 ? m.max_len : 3;
        Value *in = ARENA_ARRAY(&a, Value, n + 1);
        for (size_t i = 0; i < n && m.n_vocab; i++)
            in[i] = m.numeric_tokens ? value_float((m.token_lo + m.token_hi) / 2) : m.vocab[i % m.n_vocab];
        VizTrace t;
        if ((m.n_vocab || n == 0) && viz_trace_run(&m, &ws, in, m.n_vocab ? n : 0, &a, &t, err, sizeof err)) {
            FILE *sink = fopen("/dev/null", "w");
            if (sink) {
                viz_trace_print(sink, &m, &L, &t, in);
                (void)viz_heatmap_write(sink, &m, &L, &t, in, err, sizeof err);
                fclose(sink);
            }
            viz_trace_free(&t);
        }
        workspace_free(&ws);
    }
    arena_free(&a);
    model_free(&m);
    return 0;
}
