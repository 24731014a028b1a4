/* The command line's one duration formatter (tools/etrt/duration.c): three
 * significant figures in the unit that fits. */
#include <string.h>

#include "duration.h"
#include "test_util.h"

static void expect(double seconds, const char *want) {
  char buf[32];
  etrt_tool_format_duration(seconds, buf, sizeof buf);
  if (strcmp(buf, want) != 0)
    etrt_test_fail(__FILE__, __LINE__, "%.12g s: got '%s', want '%s'", seconds, buf, want);
}

int main(void) {
  expect(850e-9, "850 ns");
  expect(12.4e-6, "12.4 \xc2\xb5s");
  expect(3.17e-3, "3.17 ms");
  expect(1.2, "1.20 s");
  expect(0.0, "0 ns");
  expect(5e-9, "5.00 ns");
  expect(0.5e-9, "0.5 ns");
  expect(999.4e-9, "999 ns");
  expect(999.7e-9, "1.00 \xc2\xb5s"); /* rounding carries into the next unit */
  expect(99.97e-6, "100 \xc2\xb5s");
  expect(9.996e-3, "10.0 ms");
  expect(250e-3, "250 ms");
  expect(4321.0, "4321 s");
  expect(-2.5e-6, "-2.50 \xc2\xb5s"); /* an overhead can come out negative */
  char tiny[4];
  etrt_tool_format_duration(3.17e-3, tiny, sizeof tiny); /* truncated, still terminated */
  CHECK(strlen(tiny) == 3);
  return TEST_EXIT();
}
