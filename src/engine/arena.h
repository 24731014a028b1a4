/* A bump allocator for the engine's graph: names, attribute copies, node states and
 * (for networks) constant bytes live as long as the graph and are freed together, so
 * that neither building nor deserializing needs a free per field. Pointers stay
 * valid until etrt_arena_release (blocks never move). Not thread-safe; graphs are
 * built by one thread and only read afterwards. */
#ifndef ETRT_ENGINE_ARENA_H
#define ETRT_ENGINE_ARENA_H

#include <stddef.h>

typedef struct etrt_arena_block etrt_arena_block;

typedef struct etrt_arena {
  etrt_arena_block *head; /* newest block first */
  size_t bytes;           /* bytes handed out, for diagnostics */
} etrt_arena;

void etrt_arena_init(etrt_arena *arena);
void etrt_arena_release(etrt_arena *arena);

/* `size` bytes aligned to `alignment` (a power of two, at most 4096), zero-filled;
 * NULL when out of memory. A request of 0 bytes returns a valid unique pointer. */
void *etrt_arena_alloc(etrt_arena *arena, size_t size, size_t alignment);
void *etrt_arena_memdup(etrt_arena *arena, const void *data, size_t size, size_t alignment);
/* A NUL-terminated copy of the first `length` bytes of `text`. */
char *etrt_arena_strndup(etrt_arena *arena, const char *text, size_t length);

#endif
