#include "core/nstime.h"
#include "trace/instance.h"

unsigned trace_buffer_kb_for(uint64_t duration_ns, uint64_t events_per_sec)
{
	if (duration_ns == 0 || events_per_sec == 0)
		return TRACE_BUFFER_KB_MIN;
	/* In double: an hour at a million events per second overflows nothing. */
	double bytes = (double)duration_ns / (double)NS_PER_SEC * (double)events_per_sec
		       * TRACE_BYTES_PER_EVENT * 1.5;   /* headroom for bursts and page padding */
	double kb = bytes / 1024.0;
	if (kb < TRACE_BUFFER_KB_MIN)
		return TRACE_BUFFER_KB_MIN;
	if (kb > TRACE_BUFFER_KB_MAX)
		return TRACE_BUFFER_KB_MAX;
	return (unsigned)kb;
}
