/* model.bin: a Model stored as a safetensors container (docs/model-format.md is the reference).
 *
 * Every weight tensor is named after its place in the machine (embed.token, embed.pos,
 * layer.L.head.H.{wq,wk,wv,wo}, layer.L.mlp.{w1,b1,w2,b2}, layer.L.mlp.{w3,b3} for a gated
 * layer only, output.readout) and stored either
 * dense (one F64 tensor NAME) or sparse (NAME.shape: I64 dense shape, NAME.index: I32/I64
 * row-major flat index of each stored entry, strictly increasing, NAME.values: F64), whichever is
 * smaller, so the file grows with the non-zeros. `__metadata__` holds format = "raspcc-model",
 * version = "3", the configuration as a JSON string (per layer "gated"; checks of kind "margin"
 * with their terms, thresholds and margin), the residual labels, the program and its
 * provenance, and an FNV-1a 64 checksum.
 *
 * The reader rejects, with a message naming the problem and never crashing, a file that is
 * truncated, corrupted (checksum), foreign (not raspcc-model), of another version (versions 1
 * and 2 with a message to recompile), inconsistent (a tensor whose shape disagrees with the
 * configuration, w3/b3 on a layer that is not gated, a sparse index out of range, unsorted or
 * repeated, counts that disagree, a non-finite entry, an output description that breaks the
 * readout contract of runtime/model.h, a check that breaks model_check_checks), or whose dense
 * expansion exceeds the limits below (before allocating anything for it). The writer refuses a
 * model the reader would refuse (model_check_layers, model_check_output, model_check_checks). */
#ifndef RASPCC_RUNTIME_MODEL_IO_H
#define RASPCC_RUNTIME_MODEL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/model.h"

#define MODEL_FORMAT_NAME "raspcc-model"
#define MODEL_FORMAT_VERSION "3"

/* The reader's limits on the dense expansion of the weights (the writer refuses models above
 * them too): entries of one tensor, and bytes of all of them (F64). */
#define MODEL_MAX_MATRIX_ENTRIES ((uint64_t)1 << 28)
#define MODEL_MAX_TOTAL_BYTES ((uint64_t)4 << 30)

/* Serialises m to a malloc'ed buffer / writes it to path. */
bool model_serialize(const Model *m, uint8_t **buf, size_t *len, char *err, size_t errsize);
bool model_write(const Model *m, const char *path, char *err, size_t errsize);
/* The size in bytes of the file model_write would write (0 when the model cannot be written). */
size_t model_file_bytes(const Model *m);

/* Reads a model into *m (which the function initialises; on failure *m is left freed, so the
 * caller calls model_free only after success). */
bool model_read_buffer(const uint8_t *buf, size_t len, Model *m, char *err, size_t errsize);
bool model_read(const char *path, Model *m, char *err, size_t errsize);
/* model_read_buffer with the checksum check optional: for the fuzzer, so mutated files reach
 * the configuration and tensor checks behind it. Everything else is validated as usual. */
bool model_read_buffer_ex(const uint8_t *buf, size_t len, bool verify_checksum, Model *m, char *err, size_t errsize);
/* The reader with every option: opt NULL = checksum verified, the default limits. Lower limits
 * let a fuzzer keep its memory small (a tiny sparse file can describe a huge dense matrix). */
typedef struct ModelReadOptions {
    bool verify_checksum;
    uint64_t max_matrix_entries; /* entries of one tensor's dense expansion */
    uint64_t max_total_bytes;    /* bytes (8 per entry) of all of them */
} ModelReadOptions;
bool model_read_buffer_opts(const uint8_t *buf, size_t len, const ModelReadOptions *opt, Model *m, char *err,
                            size_t errsize);

/* The checksum stored under `checksum`: FNV-1a 64 over the data area (every tensor's bytes, in
 * file order) and then the metadata values format, version, config, labels, program,
 * program_name, compile_flags, each followed by one NUL byte; 16 lowercase hex digits. */
uint64_t model_fnv1a(uint64_t h, const void *bytes, size_t n);
#define MODEL_FNV_OFFSET 0xcbf29ce484222325ull

#endif
