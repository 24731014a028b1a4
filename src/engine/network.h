/* The inside of a network definition, for the plan writer. */
#ifndef ETRT_ENGINE_NETWORK_H
#define ETRT_ENGINE_NETWORK_H

#include "engine/graph.h"
#include "etrt/network.h"

const etrt_graph *etrt_network_graph(const etrt_network *network);

#endif
