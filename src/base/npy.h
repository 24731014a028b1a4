/* NumPy .npy files: the tensors `etrt run` reads and writes.
 *
 * Reading accepts format versions 1.0, 2.0 and 3.0, C order only, and the
 * little-endian dtypes '<f2' '<f4' '<f8' '|b1' '|u1' '|i1' '<i2' '<i4' '<i8' '<u2'
 * '<u4' '<u8', and bfloat16 as ml_dtypes writes it: the 2-byte void '<V2' (or '|V2', what
 * NumPy writes back after loading one; `array.view(ml_dtypes.bfloat16)` gives the
 * values). The header dictionary is parsed strictly (the three keys once each,
 * Python literals, a well-formed shape tuple of at most ETRT_MAX_RANK sizes) and the
 * data must be exactly numel * itemsize bytes. Every refusal names the field and its
 * byte offset. Writing produces what numpy.save produces (version 1.0 headers, padded
 * so that the data starts 64-byte aligned); bfloat16 is written as '<V2', which
 * `numpy.load(path).view(ml_dtypes.bfloat16)` reads. */
#ifndef ETRT_BASE_NPY_H
#define ETRT_BASE_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "etrt/types.h"

typedef struct etrt_npy {
  etrt_tensor_view view; /* view.data: the elements, in the buffer parsed or in `owned` */
  size_t nbytes;         /* bytes of data */
  size_t data_offset;    /* where the data starts in the buffer */
  void *owned;           /* non-NULL when the data had to be copied for alignment */
} etrt_npy;

/* Parses a .npy held in memory. The data is used in place (zero copy) when it is
 * aligned for its dtype, so `data` must then outlive `out`; otherwise it is copied
 * once. Release with etrt_npy_release. */
etrt_status etrt_npy_parse(const void *data, size_t size, etrt_npy *out);
void etrt_npy_release(etrt_npy *npy);

/* Reads a .npy file into a malloc'd copy: view->data is to be freed with free(). */
etrt_status etrt_npy_read_file(const char *path, etrt_tensor_view *view, size_t *nbytes);

/* The bytes of a .npy holding `view` (malloc'd; free with free()). */
etrt_status etrt_npy_encode(const etrt_tensor_view *view, uint8_t **out, size_t *size);
/* Writes `view` (host memory) to `path`, all or nothing (etrt_file_write_atomic). */
etrt_status etrt_npy_write_file(const char *path, const etrt_tensor_view *view);

#endif
