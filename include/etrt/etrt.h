/* etrt: everything in one include. */
#ifndef ETRT_ETRT_H
#define ETRT_ETRT_H

#include "etrt/build.h"
#include "etrt/bundled.h"
#include "etrt/log.h"
#include "etrt/method.h"
#include "etrt/network.h"
#include "etrt/program.h"
#include "etrt/status.h"
#include "etrt/stream.h"
#include "etrt/support.h"
#include "etrt/types.h"

#endif
