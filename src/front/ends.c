/* Every front end: called through a link of its name, latscope is that tool
 * (main.c; src/meson.build makes the links). */
#include "core/array.h"
#include "front/driver.h"

const struct front_end *const front_ends[] = { &cyclictest_front, &rtla_front, &oslat_front };
const size_t nfront_ends = ARRAY_SIZE(front_ends);
