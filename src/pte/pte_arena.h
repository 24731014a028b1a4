/* The arena behind a parsed program or a builder: chunks of zeroed, 16-byte
 * aligned memory, all released at once. */
#ifndef ETRT_PTE_PTE_ARENA_H
#define ETRT_PTE_PTE_ARENA_H

#include <stddef.h>

typedef struct etrt_pte_arena etrt_pte_arena;

etrt_pte_arena *etrt_pte_arena_create(void);
void etrt_pte_arena_destroy(etrt_pte_arena *arena);

/* Zeroed, 16-byte aligned; NULL on failure or overflow. Zero bytes gives a valid
 * pointer. */
void *etrt_pte_arena_alloc(etrt_pte_arena *arena, size_t size);
void *etrt_pte_arena_alloc_array(etrt_pte_arena *arena, size_t elem_size, size_t count);

#endif
