/* The layers of the training engine in both precisions: name_f32 works on float, name_f64 on
 * double (train/layers.inc, compiled by train/engine_f32.c and train/engine_f64.c). Backward
 * passes accumulate (+=) into the gradients they are given; NULL gradients are skipped. */
#ifndef RASPCC_TRAIN_LAYERS_H
#define RASPCC_TRAIN_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A fixed matrix in compressed sparse rows (rows x cols; row i holds entries
 * row_start[i]..row_start[i+1]-1 at columns col[], values val[]). The sparse and looped
 * backbones are almost all zeros: R_V is a {0,1} mask or shift, R_Q and R_K select blocks. */
typedef struct TrSparse {
    size_t rows, cols, nnz;
    size_t *row_start; /* rows + 1 */
    uint32_t *col;
    double *val;
} TrSparse;

#define TR_REAL float
#define TRN(x) x##_f32
#include "train/layers_api.inc"
#undef TR_REAL
#undef TRN

#define TR_REAL double
#define TRN(x) x##_f64
#include "train/layers_api.inc"
#undef TR_REAL
#undef TRN

#endif
