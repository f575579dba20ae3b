/* The per-precision entry points behind train/model.h (train/engine.inc compiled as
 * engine_f32.c and engine_f64.c); only train/model.c calls them. */
#ifndef RASPCC_TRAIN_ENGINE_H
#define RASPCC_TRAIN_ENGINE_H

#include "train/model.h"

#define TR_ENGINE_DECLS(S)                                                                         \
    double tr_engine_forward_##S(TrModel *md, const TrBatch *b);                                   \
    void tr_engine_backward_##S(TrModel *md, const TrBatch *b, bool all);                          \
    double tr_engine_adam_##S(TrModel *md, const TrAdam *opt);                                     \
    void tr_engine_predictions_##S(const TrModel *md, const TrBatch *b, uint32_t *pred);           \
    double tr_engine_get_##S(const TrModel *md, size_t tensor, size_t i, int which);               \
    void tr_engine_put_##S(TrModel *md, size_t tensor, size_t i, double v);

TR_ENGINE_DECLS(f32)
TR_ENGINE_DECLS(f64)

#endif
