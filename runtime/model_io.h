/* model.bin: a Model stored as a safetensors container (docs/model-format.md is the reference).
 *
 * Every tensor is F64 and named after its place in the machine (embed.token, embed.pos,
 * layer.L.head.H.{wq,wk,wv,wo}, layer.L.mlp.{w1,b1,w2,b2}, output.readout); `__metadata__`
 * holds format = "raspcc-model", version = "1", the configuration as a JSON string, the residual
 * labels, the program and its provenance, and an FNV-1a 64 checksum.
 *
 * The reader rejects, with a message naming the problem and never crashing, a file that is
 * truncated, corrupted (checksum), foreign (not raspcc-model), of another version, or
 * inconsistent (a tensor whose shape disagrees with the configuration, an index out of range). */
#ifndef RASPCC_RUNTIME_MODEL_IO_H
#define RASPCC_RUNTIME_MODEL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/model.h"

#define MODEL_FORMAT_NAME "raspcc-model"
#define MODEL_FORMAT_VERSION "1"

/* Serialises m to a malloc'ed buffer / writes it to path. */
bool model_serialize(const Model *m, uint8_t **buf, size_t *len, char *err, size_t errsize);
bool model_write(const Model *m, const char *path, char *err, size_t errsize);

/* Reads a model into *m (which the function initialises; on failure *m is left freed, so the
 * caller calls model_free only after success). */
bool model_read_buffer(const uint8_t *buf, size_t len, Model *m, char *err, size_t errsize);
bool model_read(const char *path, Model *m, char *err, size_t errsize);
/* model_read_buffer with the checksum check optional: for the fuzzer, so mutated files reach
 * the configuration and tensor checks behind it. Everything else is validated as usual. */
bool model_read_buffer_ex(const uint8_t *buf, size_t len, bool verify_checksum, Model *m, char *err, size_t errsize);

/* The checksum stored under `checksum`: FNV-1a 64 over the data area (every tensor's bytes, in
 * file order) and then the metadata values format, version, config, labels, program,
 * program_name, compile_flags, each followed by one NUL byte; 16 lowercase hex digits. */
uint64_t model_fnv1a(uint64_t h, const void *bytes, size_t n);
#define MODEL_FNV_OFFSET 0xcbf29ce484222325ull

#endif
