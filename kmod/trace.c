// SPDX-License-Identifier: GPL-2.0
/* collx: instantiates the tracepoints declared in trace.h. */
#define CREATE_TRACE_POINTS
#include "trace.h"
