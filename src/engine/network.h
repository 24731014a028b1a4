/* The inside of a network definition, for the plan writer. */
#ifndef ETRT_ENGINE_NETWORK_H
#define ETRT_ENGINE_NETWORK_H

#include "engine/graph.h"
#include "etrt/network.h"

const etrt_graph *etrt_network_graph(const etrt_network *network);

/* The bytes of `value` known on the host while the network is built (constants, shape
 * inputs' bounds and what is computed from those), at the inputs' smallest (*lo) and
 * largest (*hi) shapes; NULL where not known. */
void etrt_network_host_values(const etrt_network *network, int32_t value, const void **lo,
                              const void **hi);

#endif
