#include "engine/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"

/* Small requests share blocks of this size; larger ones get a block of their own so
 * that a big constant wastes nothing. */
#define ETRT_ARENA_BLOCK_SIZE ((size_t)64 * 1024)

struct etrt_arena_block {
  etrt_arena_block *next;
  size_t size; /* usable bytes after the header */
  size_t used;
  /* the bytes follow, aligned to max_align_t */
};

#define ETRT_ARENA_HEADER etrt_align_up(sizeof(etrt_arena_block), sizeof(max_align_t))

void etrt_arena_init(etrt_arena *arena) {
  arena->head = NULL;
  arena->bytes = 0;
}

void etrt_arena_release(etrt_arena *arena) {
  etrt_arena_block *b = arena->head;
  while (b != NULL) {
    etrt_arena_block *next = b->next;
    free(b);
    b = next;
  }
  arena->head = NULL;
  arena->bytes = 0;
}

static uint8_t *etrt_arena_block_bytes(etrt_arena_block *b) {
  return (uint8_t *)b + ETRT_ARENA_HEADER;
}

/* Where an aligned allocation of `size` would start in block `b`, or NULL. */
static uint8_t *etrt_arena_fit(etrt_arena_block *b, size_t size, size_t alignment) {
  uintptr_t base = (uintptr_t)etrt_arena_block_bytes(b);
  uintptr_t start = (base + b->used + alignment - 1) & ~(uintptr_t)(alignment - 1);
  size_t offset = (size_t)(start - base);
  if (offset > b->size || size > b->size - offset) return NULL;
  return (uint8_t *)start;
}

void *etrt_arena_alloc(etrt_arena *arena, size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) return NULL;
  if (size == 0) size = 1;
  uint8_t *p = arena->head != NULL ? etrt_arena_fit(arena->head, size, alignment) : NULL;
  if (p == NULL) {
    size_t want;
    if (etrt_add_overflow_size(size, alignment, &want)) return NULL;
    if (want < ETRT_ARENA_BLOCK_SIZE) want = ETRT_ARENA_BLOCK_SIZE;
    size_t total;
    if (etrt_add_overflow_size(want, ETRT_ARENA_HEADER, &total)) return NULL;
    etrt_arena_block *b = malloc(total);
    if (b == NULL) return NULL;
    b->size = want;
    b->used = 0;
    /* A dedicated big block goes behind the head so that the head keeps serving
     * small requests. */
    if (want > ETRT_ARENA_BLOCK_SIZE && arena->head != NULL) {
      b->next = arena->head->next;
      arena->head->next = b;
    } else {
      b->next = arena->head;
      arena->head = b;
    }
    p = etrt_arena_fit(b, size, alignment);
    b->used = (size_t)(p - etrt_arena_block_bytes(b)) + size;
  } else {
    arena->head->used = (size_t)(p - etrt_arena_block_bytes(arena->head)) + size;
  }
  arena->bytes += size;
  memset(p, 0, size);
  return p;
}

void *etrt_arena_memdup(etrt_arena *arena, const void *data, size_t size, size_t alignment) {
  void *p = etrt_arena_alloc(arena, size, alignment);
  if (p != NULL && size > 0) memcpy(p, data, size);
  return p;
}

char *etrt_arena_strndup(etrt_arena *arena, const char *text, size_t length) {
  size_t total;
  if (etrt_add_overflow_size(length, 1, &total)) return NULL;
  char *p = etrt_arena_alloc(arena, total, 1);
  if (p != NULL && length > 0) memcpy(p, text, length);
  return p;
}
