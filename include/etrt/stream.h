/* The caller picks the stream (contract rule 5) and may confine work to part of the
 * GPU with a green context (rule 6). Streams are cudaStream_t passed as void *. */
#ifndef ETRT_STREAM_H
#define ETRT_STREAM_H

#include "etrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Selects `stream` for every etrt delegate on the calling thread until the matching
 * pop. Selections nest. An explicit NULL (the legacy default stream) still counts as
 * a selection. With none, delegates use the per-thread default stream. */
etrt_status etrt_stream_push(void *stream);
etrt_status etrt_stream_pop(void);
/* 1 and the stream when this thread has a selection, else 0 with *stream left as it
 * was (so a caller may preset it to its default). `stream` may be NULL. */
int etrt_stream_selected(void **stream);

/* Scope form: ETRT_STREAM_SCOPE(s) { ... } runs the block with `s` selected. */
#define ETRT_STREAM_SCOPE(s)                                                      \
  for (int etrt_scope_once_ = (etrt_stream_push(s) == ETRT_OK); etrt_scope_once_; \
       etrt_scope_once_ = 0, etrt_stream_pop())

/* A stream on a green context of `device` holding `sm_count` SMs (rounded up as the
 * hardware requires); *granted_sms says how many were granted. The green context
 * need not be current for work on the stream to stay inside its partition. */
etrt_status etrt_green_stream_create(int device, int sm_count, void **stream, int *granted_sms);
etrt_status etrt_green_stream_destroy(void *stream);

#ifdef __cplusplus
}
#endif
#endif
