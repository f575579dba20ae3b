/* libFuzzer target: model_read_buffer must accept or reject any bytes without crashing, and a
 * model it accepts must be usable: a workspace can be built and inputs run through it (every
 * length up to 3, so per-length value sets are decoded at several lengths; real-valued tokens
 * spread over their range, so gated MLPs multiply different values and margin checks both pass
 * and refuse), and the writer must write it back to a file that reads again (the writer refuses
 * nothing the reader accepts).
 *
 * A sparse tensor lets a few bytes describe a huge dense matrix, so the reads here use small
 * expansion limits (the default ones would let one input allocate gigabytes), and inputs run
 * only through models of short maximum length (the workspace grows with its square). */
#include <stdint.h>
#include <stdlib.h>

#include "runtime/forward.h"
#include "runtime/model_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Model m;
    char err[512];
    ModelReadOptions opt = {true, (uint64_t)1 << 16, (uint64_t)1 << 19};
    if (model_read_buffer_opts(data, size, &opt, &m, err, sizeof err)) model_free(&m);
    /* Again without the checksum, so mutations reach the config and tensor checks. */
    opt.verify_checksum = false;
    if (!model_read_buffer_opts(data, size, &opt, &m, err, sizeof err)) return 0;
    Workspace ws;
    if (m.max_len <= 64 && workspace_init(&ws, &m, err, sizeof err)) {
        Arena a;
        arena_init(&a);
        size_t longest = m.max_len < 3 ? m.max_len : 3;
        Value *in = ARENA_ARRAY(&a, Value, longest + 1), *out;
        for (size_t i = 0; i < longest && m.n_vocab; i++) {
            double t = (double)(i + 1) / 4; /* lo (1 - t) + hi t: inside the range, never overflowing */
            in[i] = m.numeric_tokens ? value_float(m.token_lo * (1 - t) + m.token_hi * t) : m.vocab[i % m.n_vocab];
        }
        for (size_t n = 0; n <= longest; n++)
            if (m.n_vocab || n == 0) (void)model_run(&m, &ws, in, n, &a, &out, err, sizeof err);
        arena_free(&a);
        workspace_free(&ws);
    }
    uint8_t *buf;
    size_t len;
    if (!model_serialize(&m, &buf, &len, err, sizeof err)) abort(); /* the reader accepted it */
    Model again;
    opt.verify_checksum = true;
    if (!model_read_buffer_opts(buf, len, &opt, &again, err, sizeof err)) abort();
    model_free(&again);
    free(buf);
    model_free(&m);
    return 0;
}
