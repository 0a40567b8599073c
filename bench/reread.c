/*
 * reread: the minimal re-read loop bench/vs-fio holds `latscope io --pattern
 * same` against.  In the spirit of the loop in the "Interrupt time inflation
 * on Xen" thread (read 64 KiB, seek back, repeat), but one pread(2) at offset
 * 0 per iteration, each timed with clock_gettime(CLOCK_MONOTONIC) just before
 * and just after, as latscope does.
 *
 *   reread FILE BS SECONDS CPU [buffered]
 *
 * Pins itself to CPU, opens FILE read-only with O_DIRECT (unless "buffered"),
 * re-reads its first BS bytes for SECONDS, then prints one JSON object:
 * count, elapsed_ns (first clock read to last), min/mean/max and the nearest
 * rank p50/p99/p99.9 of every read (exact, from the sorted samples), and the
 * process's user and system time over the loop (getrusage).
 *
 * Built by bench/vs-fio with `cc -O2`; standalone otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* nearest rank: the smallest sample with at least p of them at or below it */
static uint64_t rank(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);
	return v[k ? k - 1 : 0];
}

static void die(const char *what)
{
	fprintf(stderr, "reread: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc > 6 || (argc == 6 && strcmp(argv[5], "buffered") != 0)) {
		fprintf(stderr, "usage: reread FILE BS SECONDS CPU [buffered]\n");
		return 2;
	}
	const char *path = argv[1];
	size_t bs = strtoull(argv[2], NULL, 10);
	double secs = strtod(argv[3], NULL);
	int cpu = atoi(argv[4]);
	int direct = argc < 6;
	if (bs == 0 || secs <= 0) {
		fprintf(stderr, "reread: bad BS or SECONDS\n");
		return 2;
	}

	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		die("sched_setaffinity");
	int fd = open(path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
	if (fd < 0)
		die(path);
	void *buf;
	if (posix_memalign(&buf, 4096, bs) != 0) {
		errno = ENOMEM;
		die("posix_memalign");
	}
	memset(buf, 0, bs);

	size_t cap = 1u << 20, n = 0;
	uint64_t *lat = malloc(cap * sizeof(*lat));
	if (!lat)
		die("malloc");
	memset(lat, 0, cap * sizeof(*lat));   /* pre-fault the first million */

	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	uint64_t start = now_ns(), end = start + (uint64_t)(secs * 1e9), t1 = start;
	while (t1 < end) {
		uint64_t t0 = now_ns();
		ssize_t got = pread(fd, buf, bs, 0);
		t1 = now_ns();
		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)bs) {
			if (got >= 0)
				errno = EIO;
			die("pread");
		}
		if (n == cap) {
			cap *= 2;
			uint64_t *p = realloc(lat, cap * sizeof(*lat));
			if (!p)
				die("realloc");
			lat = p;
		}
		lat[n++] = t1 - t0;
	}
	getrusage(RUSAGE_SELF, &r1);
	uint64_t elapsed = t1 - start;

	long double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += lat[i];
	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("{\"count\": %zu, \"elapsed_ns\": %" PRIu64 ", \"bs\": %zu, \"direct\": %s, \"cpu\": %d, "
	       "\"min_ns\": %" PRIu64 ", \"mean_ns\": %.1f, \"p50_ns\": %" PRIu64 ", \"p99_ns\": %" PRIu64
	       ", \"p99_9_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 ", \"user_ns\": %" PRIu64 ", \"sys_ns\": %" PRIu64 "}\n",
	       n, elapsed, bs, direct ? "true" : "false", cpu, n ? lat[0] : 0, n ? (double)(sum / n) : 0.0,
	       n ? rank(lat, n, 0.50) : 0, n ? rank(lat, n, 0.99) : 0, n ? rank(lat, n, 0.999) : 0, n ? lat[n - 1] : 0,
	       tv_ns(r1.ru_utime) - tv_ns(r0.ru_utime), tv_ns(r1.ru_stime) - tv_ns(r0.ru_stime));
	free(lat);
	free(buf);
	close(fd);
	return 0;
}
