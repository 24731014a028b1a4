/* The one bump allocator of the project: everything a parsed model, a builder graph,
 * an engine graph or a .pte program owns (names, arrays, attribute copies, node
 * states) lives in an arena and is freed at once, so that neither parsing nor
 * building needs a free per field.
 *
 * Memory comes in chunks; a chunk never moves, so pointers stay valid until the arena
 * is released. A request larger than a chunk gets a chunk of its own, so a big
 * constant wastes nothing. Every size is overflow-checked: a request that cannot be
 * represented is refused with NULL, never wrapped. Not thread-safe: an arena is filled
 * by one thread (it may be read by many afterwards).
 *
 * An arena is either embedded (etrt_arena_init / etrt_arena_release) or on the heap
 * (etrt_arena_create / etrt_arena_destroy). */
#ifndef ETRT_BASE_ARENA_H
#define ETRT_BASE_ARENA_H

#include <stdarg.h>
#include <stddef.h>

#include "base/status.h" /* ETRT_PRINTF */

/* The largest alignment a request may ask for. */
#define ETRT_ARENA_MAX_ALIGNMENT ((size_t)4096)

typedef struct etrt_arena_chunk etrt_arena_chunk;

typedef struct etrt_arena {
  etrt_arena_chunk *head; /* the chunk small requests are served from, first */
  size_t bytes;           /* bytes handed out, for diagnostics and tests */
} etrt_arena;

void etrt_arena_init(etrt_arena *arena);
/* Frees every chunk; the arena is empty and usable again afterwards. */
void etrt_arena_release(etrt_arena *arena);

/* A heap arena; NULL when out of memory. Destroying NULL does nothing. */
etrt_arena *etrt_arena_create(void);
void etrt_arena_destroy(etrt_arena *arena);

/* `size` bytes aligned to `alignment` (a power of two, at most
 * ETRT_ARENA_MAX_ALIGNMENT), zero-filled; NULL when out of memory, for a bad
 * alignment, or when the size overflows. A request of 0 bytes returns a valid
 * unique pointer. */
void *etrt_arena_alloc(etrt_arena *arena, size_t size, size_t alignment);
/* The same without zeroing, for bytes the caller fills at once (weights). */
void *etrt_arena_alloc_uninit(etrt_arena *arena, size_t size, size_t alignment);
/* `count` zeroed elements of `elem_size` bytes; NULL when count * elem_size overflows. */
void *etrt_arena_alloc_array(etrt_arena *arena, size_t elem_size, size_t count, size_t alignment);
void *etrt_arena_memdup(etrt_arena *arena, const void *data, size_t size, size_t alignment);
/* A NUL-terminated copy of the first `length` bytes of `text`. */
char *etrt_arena_strndup(etrt_arena *arena, const char *text, size_t length);
char *etrt_arena_strdup(etrt_arena *arena, const char *text);
/* printf into arena memory; NULL when out of memory or on a format error. */
char *etrt_arena_printf(etrt_arena *arena, const char *fmt, ...) ETRT_PRINTF(2, 3);
char *etrt_arena_vprintf(etrt_arena *arena, const char *fmt, va_list args) ETRT_PRINTF(2, 0);

#endif
