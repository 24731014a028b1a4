#include "duration.h"

#include <math.h>
#include <stdio.h>

char *etrt_tool_format_duration(double seconds, char *buf, size_t size) {
  static const char *const units[] = {"ns", "\xc2\xb5s", "ms", "s"};
  if (size == 0) return buf;
  if (!isfinite(seconds)) {
    snprintf(buf, size, "%g s", seconds);
    return buf;
  }
  /* A difference of two timings may be negative. */
  const char *sign = seconds < 0 ? "-" : "";
  double value = fabs(seconds) * 1e9;
  int unit = 0;
  /* Pick the unit after rounding to three figures, so that 999.7 ns becomes
   * "1.00 µs" rather than "1000 ns". */
  while (unit < 3 && value >= 999.5) {
    value /= 1e3;
    ++unit;
  }
  if (value >= 99.95) {
    snprintf(buf, size, "%s%.0f %s", sign, value, units[unit]);
  } else if (value >= 9.995) {
    snprintf(buf, size, "%s%.1f %s", sign, value, units[unit]);
  } else if (value >= 0.9995) {
    snprintf(buf, size, "%s%.2f %s", sign, value, units[unit]);
  } else {
    snprintf(buf, size, "%s%.3g %s", sign, value, units[unit]); /* under a nanosecond */
  }
  return buf;
}
