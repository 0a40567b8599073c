/* mem: streaming writes for bandwidth and scattered ones that defeat the caches. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "load/gen.h"

#define MEM_BYTES (UINT64_C(64) << 20)      /* above the last-level cache of common machines */
#define MEM_CHUNK_WORDS (32768u)            /* 256 KiB streamed between pacing checks */
#define LINE_WORDS 8u                       /* 64-byte cache lines */
#define JUMP_LINES 40503u                   /* odd: visits every line; large: no prefetch helps */

_Static_assert(MEM_BYTES / sizeof(uint64_t) % MEM_CHUNK_WORDS == 0, "chunks must tile the buffer");

static int mem_setup(struct gen_worker *w, struct lat_error *err)
{
	/* Every page faulted in now, not during the measurement: MAP_POPULATE faults a
	 * private writable mapping in for writing, each page its own.  (A memset after it
	 * only cost time: 1 s under ThreadSanitizer, past the supervisor's 5 s for a
	 * worker to be ready on a CPU shared four ways.) */
	void *p = mmap(NULL, MEM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return err_set(err, -errno, "cannot allocate %llu MiB: %s",
				(unsigned long long)(MEM_BYTES >> 20), strerror(errno));
	w->buf = p;
	w->buf_size = MEM_BYTES;
	return 0;
}

__attribute__((noreturn))
static void mem_run(struct gen_worker *w)
{
	volatile uint64_t *words = w->buf;
	size_t nwords = w->buf_size / sizeof(uint64_t), nlines = nwords / LINE_WORDS;
	size_t pos = 0, line = 0;

	for (;;) {
		for (size_t i = 0; i < MEM_CHUNK_WORDS; i++)
			words[pos + i] += 1;
		pos = (pos + MEM_CHUNK_WORDS) % nwords;
		for (unsigned i = 0; i < 4096; i++) {
			line = (line + JUMP_LINES) % nlines;
			words[line * LINE_WORDS] ^= i;
		}
		duty_pace(&w->duty);
	}
}

const struct gen_ops gen_mem = { .setup = mem_setup, .run = mem_run };
