/* The engine in float64 (train/layers.inc and train/engine.inc with real = double). */
#include "train/layers.h"
#include "train/model.h"

#define TR_REAL double
#define TRN(x) x##_f64
#include "train/layers.inc"
#include "train/engine.inc"
