/* Arena allocation: every IR, AST and evaluation object lives in an arena and is freed with it.
 *
 * Contract: arena_alloc never returns NULL (it aborts the process on out-of-memory, which is the
 * only unrecoverable condition in the toolchain); memory is zeroed and aligned for any object. */
#ifndef RASPCC_SUPPORT_ARENA_H
#define RASPCC_SUPPORT_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;

typedef struct Arena {
    ArenaBlock *head;     /* newest block; older blocks are chained behind it */
    size_t bytes_in_use;  /* total bytes handed out, for statistics */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
/* Frees everything allocated, keeping the largest block for what comes next: memory the process
 * has touched already (an arena refilled batch after batch stops growing, and costs no new pages). */
void arena_reset(Arena *a);
/* Zeroed, max-aligned storage for `size` bytes. */
void *arena_alloc(Arena *a, size_t size);
/* Zeroed storage for `count` objects of `size` bytes; aborts on overflow. */
void *arena_array(Arena *a, size_t count, size_t size);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
/* printf into the arena. */
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Grow an arena-backed array (old contents copied; old storage is simply abandoned). */
void *arena_grow(Arena *a, void *old, size_t old_count, size_t new_count, size_t size);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_array((a), (n), sizeof(T)))

#endif
