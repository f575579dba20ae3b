/* The layers of the training engine in both precisions: name_f32 works on float, name_f64 on
 * double (train/layers.inc, compiled by train/engine_f32.c and train/engine_f64.c). Backward
 * passes accumulate (+=) into the gradients they are given; NULL gradients are skipped. */
#ifndef RASPCC_TRAIN_LAYERS_H
#define RASPCC_TRAIN_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
