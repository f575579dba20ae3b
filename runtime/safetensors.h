/* A safetensors container (the format of Hugging Face's safetensors library): an 8-byte
 * little-endian header length N, N bytes of JSON header, then the raw tensor bytes.
 * Header: {"__metadata__": {"k": "v", ...}, "name": {"dtype": "F64", "shape": [r, c],
 * "data_offsets": [begin, end]}, ...}; offsets are relative to the byte after the header.
 * PyTorch and NumPy users can load our files with `safetensors.numpy.load_file`.
 *
 * Contract of the reader: any byte string is either accepted as a well-formed container (every
 * tensor's offsets inside the buffer, non-overlapping, covering it exactly, size matching
 * dtype x shape, the header valid UTF-8 JSON) or rejected with a message; never a crash. */
#ifndef RASPCC_RUNTIME_SAFETENSORS_H
#define RASPCC_RUNTIME_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/arena.h"

typedef enum StDtype { ST_F64, ST_F32, ST_I64, ST_I32, ST_U8 } StDtype;

typedef struct StTensor {
    const char *name;
    StDtype dtype;
    size_t ndim;
    size_t shape[4];
    const void *data; /* points into the container's buffer (reader) or the caller's (writer) */
    size_t nbytes;
} StTensor;

typedef struct StMeta {
    const char *key, *value;
} StMeta;

typedef struct StFile {
    StTensor *tensors;
    size_t n_tensors;
    StMeta *meta;
    size_t n_meta;
} StFile;

/* Parses a container held in `buf` (which must outlive the result). Tensors and metadata are
 * allocated in `arena`. On failure returns false and writes a message to errbuf. */
bool st_parse(Arena *arena, const uint8_t *buf, size_t len, StFile *out, char *errbuf, size_t errsize);

/* Serialises `f` (tensors in the given order, 8-byte aligned) to a malloc'ed buffer. */
bool st_serialize(const StFile *f, uint8_t **buf, size_t *len, char *errbuf, size_t errsize);

const StTensor *st_find(const StFile *f, const char *name);
const char *st_meta_get(const StFile *f, const char *key);
size_t st_dtype_size(StDtype d);

#endif
