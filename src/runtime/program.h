/* The loaded program, shared by its method instances (read-only after load). */
#ifndef ETRT_RUNTIME_PROGRAM_H
#define ETRT_RUNTIME_PROGRAM_H

#include "base/file.h"
#include "etrt/program.h"
#include "pte/ptd.h"
#include "pte/pte.h"

struct etrt_program {
  etrt_file_map file; /* the mapped .pte (empty when loaded from memory) */
  etrt_pte_program *pte;
  etrt_file_map data_file; /* the mapped .ptd, if any */
  etrt_ptd_file *data;
  int allow_cpu_fallback;
  int force_cpu;
  int threads;    /* the limit of CPU operators' threads; 0: all the pool has */
  int holds_pool; /* a reference to the thread pool, released at destroy */
};

/* The optional .ptd data file of external tensors (program_data.c). */
etrt_status etrt_program_open_data(etrt_program *program, const char *path);
void etrt_program_close_data(etrt_program *program);
/* The bytes of external tensor `key` of `dtype` (exactly `nbytes`): the .ptd's
 * entry first, then the program's named data. */
etrt_status etrt_program_external_tensor(const etrt_program *program, const char *key,
                                         etrt_dtype dtype, size_t nbytes, const uint8_t **out);

/* The method named `name`, or NULL with a message listing the methods. */
const etrt_pte_plan *etrt_program_plan(const etrt_program *program, const char *name);

#endif
