/* The io probe: how long a read takes and what it costs the CPU.  Reads only. */
#ifndef LATSCOPE_PROBE_IO_H
#define LATSCOPE_PROBE_IO_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/probe.h"

enum io_pattern { IO_SAME, IO_SEQ, IO_RANDOM };
enum io_engine { IO_PSYNC, IO_URING };
/* plain: page-aligned ordinary memory, as dd and most programs read into;
 * hugepage: 2 MiB-aligned with MADV_HUGEPAGE, one physically contiguous run */
enum io_buffer { IO_BUF_PLAIN, IO_BUF_HUGEPAGE };

struct io_params {
	const char *path;
	uint64_t bs;                    /* bytes per read */
	int pattern;                    /* enum io_pattern */
	int engine;                     /* enum io_engine */
	bool buffered;                  /* through the page cache instead of O_DIRECT */
	int buffer;                     /* enum io_buffer: what the reads land in */
	uint64_t depth;                 /* io_uring: reads in flight */
	uint64_t span;                  /* bytes the offsets cover: the size, rounded down to bs */
};

extern const struct probe_ops io_probe;

#endif
