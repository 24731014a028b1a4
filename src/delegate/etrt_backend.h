/* EtrtBackend: the engine delegate, an implementation of the runtime's backend
 * interface (runtime/backend.h) under the device-handling contract of DESIGN.md
 * section 3. */
#ifndef ETRT_DELEGATE_ETRT_BACKEND_H
#define ETRT_DELEGATE_ETRT_BACKEND_H

#include "runtime/backend.h"

/* The id programs name it by (the builder writes it into every delegate entry). */
#define ETRT_BACKEND_ID "EtrtBackend"

extern const etrt_backend etrt_backend_etrt;

#endif
