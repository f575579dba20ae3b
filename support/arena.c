#include "support/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
    ArenaBlock *next;
    size_t used, cap;
    max_align_t data[]; /* flexible payload, max-aligned */
};

/* Blocks double from ARENA_MIN_BLOCK up to ARENA_MAX_BLOCK (a larger request gets a block of its
 * own size): a large arena takes few blocks, and one that is reset and filled again (arena_reset)
 * soon fits in the one block it keeps. */
enum { ARENA_MIN_BLOCK = 64 * 1024, ARENA_MAX_BLOCK = 8 * 1024 * 1024 };

static void die_oom(void) {
    fputs("raspcc: out of memory\n", stderr);
    abort();
}

void arena_init(Arena *a) { a->head = NULL; a->bytes_in_use = 0; }

void arena_free(Arena *a) {
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->bytes_in_use = 0;
}

void arena_reset(Arena *a) {
    ArenaBlock *keep = a->head;
    for (ArenaBlock *b = a->head; b; b = b->next)
        if (b->cap > keep->cap) keep = b;
    for (ArenaBlock *b = a->head; b;) {
        ArenaBlock *next = b->next;
        if (b != keep) free(b);
        b = next;
    }
    a->head = keep;
    if (keep) keep->used = 0, keep->next = NULL;
    a->bytes_in_use = 0;
}

void *arena_alloc(Arena *a, size_t size) {
    const size_t align = sizeof(max_align_t);
    size_t need = (size + align - 1) / align * align;
    if (need < size) die_oom();
    ArenaBlock *b = a->head;
    if (!b || b->cap - b->used < need) {
        size_t grown = b && b->cap < ARENA_MAX_BLOCK ? 2 * b->cap : b ? ARENA_MAX_BLOCK : ARENA_MIN_BLOCK;
        size_t cap = need > grown ? need : grown;
        if (cap > SIZE_MAX - sizeof(ArenaBlock)) die_oom();
        b = malloc(sizeof(ArenaBlock) + cap);
        if (!b) die_oom();
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += need;
    a->bytes_in_use += need;
    memset(p, 0, size);
    return p;
}

void *arena_array(Arena *a, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) die_oom();
    return arena_alloc(a, count * size);
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *p = arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void *arena_grow(Arena *a, void *old, size_t old_count, size_t new_count, size_t size) {
    void *p = arena_array(a, new_count, size);
    if (old && old_count) memcpy(p, old, (old_count < new_count ? old_count : new_count) * size);
    return p;
}
