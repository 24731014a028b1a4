/* Control flow: If, Loop and Scan. A node holds its bodies as GRAPH attributes, each an
 * engine plan, deserialized once by prepare into the node's state. The values a body
 * reads from the enclosing graph are explicit: the node's last `_captures` inputs,
 * which are also the last inputs of every body, so that a body is a closed plan and
 * the enclosing plan sees every value it reads (lifetimes, partitioning). Positions:
 *
 *   If    node inputs  cond, captures             outputs  K
 *         each branch  inputs captures            outputs  K (same dtypes and ranks)
 *   Loop  node inputs  M, cond, v_initial[N], captures    outputs  v_final[N], scans[K]
 *         body inputs  iteration, cond, v[N], captures    outputs  cond, v[N], scans[K]
 *   Scan  node inputs  states[N], scan inputs[M], captures   outputs  states[N], scans[K]
 *         body inputs  states[N], slices[M], captures        outputs  states[N], scans[K]
 *         (opset 8, `_batched`: node input 0 is sequence_lens, which must be omitted, and
 *         every state, scan input and scan output has a leading batch axis)
 *
 * The CPU executor runs them (engine/control.h); the node's outputs always have dims
 * at execute: a Loop's scan outputs grow with the trip count, a branch's shapes are
 * those of the branch taken. */
#ifndef ETRT_ENGINE_OPS_CONTROL_H
#define ETRT_ENGINE_OPS_CONTROL_H

#include <stdint.h>

#include "engine/engine.h"
#include "engine/op.h"

/* How deep bodies may nest (a Loop in an If in a Loop is 3). */
#define ETRT_CONTROL_MAX_DEPTH 8
/* Most scan inputs and scan outputs of one Scan. */
#define ETRT_CONTROL_MAX_SCANS 32

typedef enum etrt_control_kind {
  ETRT_CONTROL_IF = 0,
  ETRT_CONTROL_LOOP = 1,
  ETRT_CONTROL_SCAN = 2
} etrt_control_kind;

typedef struct etrt_control_state {
  etrt_control_kind kind;
  etrt_engine *bodies[2]; /* If: then, else; Loop and Scan: the body */
  uint32_t body_count;
  uint32_t captures; /* trailing inputs read by the bodies */
  uint32_t carried;  /* N: loop-carried values, scan states */
  uint32_t scans;    /* K: scan outputs */
  uint32_t first;    /* node input of the first carried value (Loop 2, Scan 0 or 1) */
  /* Scan only. */
  uint32_t scan_inputs; /* M */
  int batched;
  int64_t in_axis[ETRT_CONTROL_MAX_SCANS], out_axis[ETRT_CONTROL_MAX_SCANS];
  uint8_t in_reverse[ETRT_CONTROL_MAX_SCANS], out_reverse[ETRT_CONTROL_MAX_SCANS];
} etrt_control_state;

/* The body input that node input `i` feeds, or -1 (If's cond, Loop's M and cond, Scan's
 * sequence_lens). */
int32_t etrt_control_body_input(const etrt_control_state *s, uint32_t i);

#endif
