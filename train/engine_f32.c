/* The engine in float32 (train/layers.inc and train/engine.inc with real = float). */
#include "train/layers.h"
#include "train/model.h"

#define TR_PRECISION_F32
#define TR_REAL float
#define TRN(x) x##_f32
#include "train/layers.inc"
#include "train/engine.inc"
