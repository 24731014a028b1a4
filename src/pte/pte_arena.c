#include "pte/pte_arena.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"

#define ARENA_CHUNK (64 * 1024)
#define ARENA_ALIGN 16

typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t used;
  size_t capacity;
  _Alignas(16) unsigned char data[];
} arena_chunk;

struct etrt_pte_arena {
  arena_chunk *head;
};

etrt_pte_arena *etrt_pte_arena_create(void) { return calloc(1, sizeof(etrt_pte_arena)); }

void etrt_pte_arena_destroy(etrt_pte_arena *arena) {
  if (arena == NULL) return;
  for (arena_chunk *c = arena->head; c != NULL;) {
    arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  free(arena);
}

void *etrt_pte_arena_alloc(etrt_pte_arena *arena, size_t size) {
  size_t rounded;
  if (etrt_add_overflow_size(size, ARENA_ALIGN - 1, &rounded)) return NULL;
  rounded = rounded / ARENA_ALIGN * ARENA_ALIGN;
  if (rounded == 0) rounded = ARENA_ALIGN;
  arena_chunk *c = arena->head;
  if (c == NULL || c->capacity - c->used < rounded) {
    size_t capacity = rounded > ARENA_CHUNK ? rounded : ARENA_CHUNK;
    size_t total;
    if (etrt_add_overflow_size(sizeof(arena_chunk), capacity, &total)) return NULL;
    c = aligned_alloc(ARENA_ALIGN, etrt_align_up(total, ARENA_ALIGN));
    if (c == NULL) return NULL;
    c->used = 0;
    c->capacity = capacity;
    if (arena->head != NULL && rounded > ARENA_CHUNK) {
      /* A large block goes behind the current chunk so its free space stays usable. */
      c->next = arena->head->next;
      arena->head->next = c;
    } else {
      c->next = arena->head;
      arena->head = c;
    }
  }
  void *p = c->data + c->used;
  c->used += rounded;
  memset(p, 0, rounded);
  return p;
}

void *etrt_pte_arena_alloc_array(etrt_pte_arena *arena, size_t elem_size, size_t count) {
  size_t size;
  if (etrt_mul_overflow_size(elem_size, count, &size)) return NULL;
  return etrt_pte_arena_alloc(arena, size);
}
