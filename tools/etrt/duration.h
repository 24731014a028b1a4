/* Durations for people: every command that prints a time uses this one helper, so
 * that a run of 850 ns does not read "0.000 ms". */
#ifndef ETRT_TOOLS_DURATION_H
#define ETRT_TOOLS_DURATION_H

#include <stddef.h>

/* Writes `seconds` with three significant figures in the unit that fits (ns, µs,
 * ms, s): "850 ns", "12.4 µs", "3.17 ms", "1.20 s". Returns buf. */
char *etrt_tool_format_duration(double seconds, char *buf, size_t size);

#endif
