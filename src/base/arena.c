#include "base/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"

/* Small requests share chunks of this size; larger ones get a chunk of their own. */
#define ETRT_ARENA_CHUNK_SIZE ((size_t)64 * 1024)

struct etrt_arena_chunk {
  etrt_arena_chunk *next;
  size_t size; /* usable bytes after the header */
  size_t used;
  /* the bytes follow, aligned to max_align_t */
};

#define ETRT_ARENA_HEADER etrt_align_up(sizeof(etrt_arena_chunk), sizeof(max_align_t))

void etrt_arena_init(etrt_arena *arena) {
  arena->head = NULL;
  arena->bytes = 0;
}

void etrt_arena_release(etrt_arena *arena) {
  etrt_arena_chunk *c = arena->head;
  while (c != NULL) {
    etrt_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  arena->head = NULL;
  arena->bytes = 0;
}

etrt_arena *etrt_arena_create(void) {
  etrt_arena *arena = malloc(sizeof *arena);
  if (arena != NULL) etrt_arena_init(arena);
  return arena;
}

void etrt_arena_destroy(etrt_arena *arena) {
  if (arena == NULL) return;
  etrt_arena_release(arena);
  free(arena);
}

static uint8_t *etrt_arena_chunk_bytes(etrt_arena_chunk *c) {
  return (uint8_t *)c + ETRT_ARENA_HEADER;
}

/* Where an aligned allocation of `size` would start in chunk `c`, or NULL. */
static uint8_t *etrt_arena_fit(etrt_arena_chunk *c, size_t size, size_t alignment) {
  uintptr_t base = (uintptr_t)etrt_arena_chunk_bytes(c);
  uintptr_t start = (base + c->used + alignment - 1) & ~(uintptr_t)(alignment - 1);
  size_t offset = (size_t)(start - base);
  if (offset > c->size || size > c->size - offset) return NULL;
  return (uint8_t *)start;
}

void *etrt_arena_alloc_uninit(etrt_arena *arena, size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > ETRT_ARENA_MAX_ALIGNMENT)
    return NULL;
  if (size == 0) size = 1;
  uint8_t *p = arena->head != NULL ? etrt_arena_fit(arena->head, size, alignment) : NULL;
  etrt_arena_chunk *c = arena->head;
  if (p == NULL) {
    /* A fresh chunk's bytes are aligned to max_align_t only: room for the padding up
     * to a larger alignment is part of the request. */
    size_t want;
    if (etrt_add_overflow_size(size, alignment, &want)) return NULL;
    if (want < ETRT_ARENA_CHUNK_SIZE) want = ETRT_ARENA_CHUNK_SIZE;
    size_t total;
    if (etrt_add_overflow_size(want, ETRT_ARENA_HEADER, &total)) return NULL;
    c = malloc(total);
    if (c == NULL) return NULL;
    c->size = want;
    c->used = 0;
    /* A dedicated big chunk goes behind the head so that the head keeps serving
     * small requests from its free space. */
    if (want > ETRT_ARENA_CHUNK_SIZE && arena->head != NULL) {
      c->next = arena->head->next;
      arena->head->next = c;
    } else {
      c->next = arena->head;
      arena->head = c;
    }
    p = etrt_arena_fit(c, size, alignment);
  }
  c->used = (size_t)(p - etrt_arena_chunk_bytes(c)) + size;
  arena->bytes += size;
  return p;
}

void *etrt_arena_alloc(etrt_arena *arena, size_t size, size_t alignment) {
  void *p = etrt_arena_alloc_uninit(arena, size, alignment);
  if (p != NULL) memset(p, 0, size == 0 ? 1 : size);
  return p;
}

void *etrt_arena_alloc_array(etrt_arena *arena, size_t elem_size, size_t count, size_t alignment) {
  size_t size;
  if (etrt_mul_overflow_size(elem_size, count, &size)) return NULL;
  return etrt_arena_alloc(arena, size, alignment);
}

void *etrt_arena_memdup(etrt_arena *arena, const void *data, size_t size, size_t alignment) {
  void *p = etrt_arena_alloc_uninit(arena, size, alignment);
  if (p != NULL && size > 0) memcpy(p, data, size);
  return p;
}

char *etrt_arena_strndup(etrt_arena *arena, const char *text, size_t length) {
  size_t total;
  if (etrt_add_overflow_size(length, 1, &total)) return NULL;
  char *p = etrt_arena_alloc_uninit(arena, total, 1);
  if (p == NULL) return NULL;
  if (length > 0) memcpy(p, text, length);
  p[length] = '\0';
  return p;
}

char *etrt_arena_strdup(etrt_arena *arena, const char *text) {
  return etrt_arena_strndup(arena, text, strlen(text));
}

char *etrt_arena_vprintf(etrt_arena *arena, const char *fmt, va_list args) {
  va_list again;
  va_copy(again, args);
  int n = vsnprintf(NULL, 0, fmt, args);
  char *text = NULL;
  if (n >= 0) text = etrt_arena_alloc_uninit(arena, (size_t)n + 1, 1);
  if (text != NULL) vsnprintf(text, (size_t)n + 1, fmt, again);
  va_end(again);
  return text;
}

char *etrt_arena_printf(etrt_arena *arena, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char *text = etrt_arena_vprintf(arena, fmt, args);
  va_end(args);
  return text;
}
