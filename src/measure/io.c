/*
 * latscope io: read throughput, per-read latency and what each read costs the
 * CPU.  It opens what it measures read-only; the one file it ever writes is a
 * new one it creates for the user with --make, never over an existing one.
 */
#include "measure/io.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "core/units.h"
#include "sys/cpus.h"
#include "sys/sysfacts.h"
#include "report/tprint.h"

static const char *const pattern_choices[] = { "same", "seq", "random", NULL };
static const char *const engine_choices[] = { "psync", "io_uring", NULL };
static const char *const buffer_choices[] = { [IO_BUF_PLAIN] = "plain", [IO_BUF_HUGEPAGE] = "hugepage", NULL };

/* io's own rows, by which this file names them: --count sits after the shared --cpus and
 * RUN_OPTS_SCHED's three, the rest of the shared rows after it. */
enum io_opt {
	IO_OPT_BS,
	IO_OPT_PATTERN,
	IO_OPT_DIRECT,
	IO_OPT_BUFFERED,
	IO_OPT_BUFFER,
	IO_OPT_ENGINE,
	IO_OPT_DEPTH,
	IO_OPT_MAKE,
	IO_OPT_SIZE,
	IO_OPT_COUNT = IO_OPT_SIZE + 5
};

static const struct opt io_opts[] = {
	[IO_OPT_BS] = { "bs", 0, OPT_SIZE, offsetof(struct io_cmd, p.bs), .min = 512,
			.max = UINT64_C(64) << 20,
			.help = "bytes per read (k, M: powers of 1024)" },
	[IO_OPT_PATTERN] = { "pattern", 0, OPT_ENUM, offsetof(struct io_cmd, p.pattern),
			     .choices = pattern_choices,
			     .help = "same: re-read one block (the device's cache and the link); "
				     "seq: walk the file; random: aligned offsets anywhere" },
	[IO_OPT_DIRECT] = { "direct", 0, OPT_FLAG, offsetof(struct io_cmd, direct),
			    .flags = OPT_NOT_PARAM,
			    .help = "O_DIRECT, around the page cache (the default)" },
	[IO_OPT_BUFFERED] = { "buffered", 0, OPT_FLAG, offsetof(struct io_cmd, p.buffered),
			      .help = "through the page cache" },
	[IO_OPT_BUFFER] = { "buffer", 0, OPT_ENUM, offsetof(struct io_cmd, p.buffer),
			    .choices = buffer_choices,
			    .help = "what the reads land in: plain, page-aligned ordinary memory "
				    "as dd and most programs use; hugepage, a 2 MiB-aligned buffer "
				    "in transparent huge pages, one physically contiguous run" },
	[IO_OPT_ENGINE] = { "engine", 0, OPT_ENUM, offsetof(struct io_cmd, p.engine),
			    .choices = engine_choices,
			    .help = "psync: one pread at a time; io_uring: --depth reads in "
				    "flight" },
	[IO_OPT_DEPTH] = { "depth", 0, OPT_UINT, offsetof(struct io_cmd, p.depth), .min = 1,
			   .max = 4096, .help = "io_uring: reads in flight" },
	[IO_OPT_MAKE] = { "make", 0, OPT_STRING, offsetof(struct io_cmd, make), .metavar = "FILE",
			  .flags = OPT_NOT_PARAM, .values = OPT_VALUES_FILE,
			  .help = "instead of measuring, create FILE (which must not exist) filled "
				  "with --size of random data" },
	[IO_OPT_SIZE] = { "size", 0, OPT_SIZE, offsetof(struct io_cmd, make_size), .min = 4096,
			  .max = UINT64_C(1) << 42, .flags = OPT_NOT_PARAM,
			  .help = "with --make: how much" },
	/* -n and --count for what the other commands call -l and --loops: a read is what io counts */
	RUN_OPT_CPUS(struct io_cmd),
	RUN_OPTS_SCHED(struct io_cmd, policy_choices_no_deadline),
	[IO_OPT_COUNT] = { "count", 'n', OPT_UINT, offsetof(struct io_cmd, run.loops), .min = 1,
			   .max = UINT64_C(1) << 48,
			   .help = "stop after N reads per thread instead of after a duration" },
	RUN_OPTS_REST(struct io_cmd),
};

#define NOPTS ARRAY_SIZE(io_opts)
_Static_assert(NOPTS == IO_OPT_COUNT + 1 + RUN_ROW_HELP - RUN_ROW_THRESHOLD + 1,
	       "enum io_opt names every own row");

static void io_defaults(void *params)
{
	struct io_cmd *c = params;
	run_params_defaults(&c->run, &c->out);
	/* As fio does: an ordinary thread, so that the figures compare. */
	c->run.policy = POLICY_OTHER;
	c->run.priority = 0;
	c->run.threshold_ns = NS_PER_MS;
	c->p.bs = 4096;
	c->p.pattern = IO_RANDOM;
	c->p.engine = IO_PSYNC;
	c->p.depth = 1;
	c->p.buffer = IO_BUF_PLAIN;
}


/* The alignment O_DIRECT needs on path: statx's answer where the kernel has it, else the block size. */
static uint64_t direct_alignment(const char *path, const struct stat *st, int fd)
{
#ifdef STATX_DIOALIGN
	struct statx sx;
	if (statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
	    sx.stx_dio_offset_align)
		return sx.stx_dio_offset_align;
#endif
	int lbs;
	if (S_ISBLK(st->st_mode) && fd >= 0 && ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
		return (uint64_t)lbs;
	(void)path;
	return (uint64_t)st->st_blksize;
}

static int check_path(void *params, const char *path, struct lat_error *err)
{
	struct io_cmd *c = params;
	struct stat st;
	uint64_t size;
	char a[32], b[32];

	if (stat(path, &st) < 0) {
		return err_set(err, -EINVAL, "'%s': %s", path, strerror(errno));
	}
	if (S_ISDIR(st.st_mode)) {
		return err_set(err, -EINVAL, "'%s' is a directory: give a file or a block device", path);
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		return err_set(err, -EINVAL, "'%s' is neither a regular file nor a block device", path);
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | (c->p.buffered ? 0 : O_DIRECT));
	if (fd < 0) {
		int e = errno;
		err_set(err, 0, "cannot open '%s' for reading%s: %s%s", path,
			 c->p.buffered ? "" : " with O_DIRECT", strerror(e),
			 (e == EPERM || e == EACCES) && S_ISBLK(st.st_mode)
				 ? " (this system refuses raw access to the device; measure a file on it instead)"
				 : e == EINVAL ? " (the file system does not support O_DIRECT; try --buffered)" : "");
		return -EINVAL;
	}
	size = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &size) < 0)
		size = 0;
	uint64_t align = c->p.buffered ? 1u : direct_alignment(path, &st, fd);
	close(fd);
	if (align > 1 && c->p.bs % align) {
		fmt_size(c->p.bs, a, sizeof(a));
		return err_set(err, -EINVAL, "option '--bs': %s is not a multiple of %llu bytes, the alignment O_DIRECT needs on '%s' "
			 "(or use --buffered)", a, (unsigned long long)align, path);
	}
	if (size < c->p.bs) {
		fmt_size(c->p.bs, a, sizeof(a));
		fmt_size(size, b, sizeof(b));
		return err_set(err, -EINVAL, "'%s' holds %s, less than one read of %s", path, b, a);
	}
	c->p.path = path;
	c->p.span = size / c->p.bs * c->p.bs;
	return 0;
}

/* io_uring can be refused (kernel.io_uring_disabled, seccomp): say so and use pread. */
static void check_uring(struct io_cmd *c)
{
	if (c->p.engine != IO_URING)
		return;
	int r = sys_io_uring_usable();
	if (r == 0)
		return;
	snprintf(c->out.note, sizeof(c->out.note), "io_uring is not available here (%s): reading with pread, one at a time",
		 strerror(-r));
	c->p.engine = IO_PSYNC;
	c->p.depth = 1;
}

static int io_validate(void *params, const struct opt_result *given, struct lat_error *err)
{
	struct io_cmd *c = params;
	(void)given;

	if (c->direct && c->p.buffered) {
		return err_set(err, -EINVAL, "options '--direct' and '--buffered' exclude each other");
	}
	if (c->make_size && !c->make) {
		return err_set(err, -EINVAL, "option '--size' needs '--make'");
	}
	if (opt_given_at(NOPTS, given, IO_OPT_COUNT) &&
	    opt_run_given(io_opts, NOPTS, given, RUN_ROW_DURATION))
		return err_set(err, -EINVAL, "options '--count' and '--duration' exclude each other");
	if (c->p.depth > 1 && c->p.engine != IO_URING) {
		err_set(err, 0, "option '--depth': psync has one read in flight; use --engine io_uring");
		return -EINVAL;
	}
	/* One reading thread unless asked: the last CPU, leaving the first to the rest. */
	if (!opt_run_given(io_opts, NOPTS, given, RUN_ROW_CPUS)) {
		int last = -1;
		cpuset_foreach(cpu, &c->run.cpus)
			last = cpu;
		cpuset_clear(&c->run.cpus);
		if (last >= 0)
			cpuset_add(&c->run.cpus, (unsigned)last);
	}
	check_uring(c);
	return 0;
}

/* The probe notes a huge-page buffer it did not get (probe/io.c); this says what was asked. */
static void io_notes(const void *params, struct result *res)
{
	const struct io_cmd *c = params;
	char mode[32];

	if (c->p.buffer == IO_BUF_HUGEPAGE)
		result_info(res, "read buffers: 2 MiB-aligned, huge pages asked with madvise(MADV_HUGEPAGE); "
			    "transparent huge pages here: %s",
			    sys_thp_mode(NULL, mode, sizeof(mode)) == 0 ? mode : "unknown (not available?)");
}

static void io_describe(const void *params, char *buf, size_t size)
{
	const struct io_cmd *c = params;
	char bs[32], span[32], dur[32];

	fmt_size(c->p.bs, bs, sizeof(bs));
	fmt_size(c->p.span, span, sizeof(span));
	if (c->run.duration_ns)
		fmt_duration(c->run.duration_ns, dur, sizeof(dur));
	else if (c->run.loops)
		snprintf(dur, sizeof(dur), "%llu reads", (unsigned long long)c->run.loops);
	else
		snprintf(dur, sizeof(dur), "until Ctrl-C");
	char depth[32] = "";
	if (c->p.engine == IO_URING)
		snprintf(depth, sizeof(depth), " depth %llu", (unsigned long long)c->p.depth);
	snprintf(buf, size, "%s %s reads of '%s' (%s), %s, %s buffer, %s%s, %s", bs, pattern_choices[c->p.pattern],
		 c->p.path, span, c->p.buffered ? "buffered" : "O_DIRECT", buffer_choices[c->p.buffer],
		 engine_choices[c->p.engine], depth, dur);
}

/* --make: the one write latscope ever does, to a new file of its own. */
static int make_file(const char *path, uint64_t size)
{
	enum { CHUNK = 1 << 20 };
	unsigned char *buf = malloc(CHUNK);
	uint64_t rng = UINT64_C(0x2545f4914f6cdd1d), left = size;
	int fd = -1, r = 0;

	if (!buf) {
		tprintf(stderr, "latscope io: out of memory\n");
		return EXIT_ERROR;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		free(buf);
		tprintf(stderr, "latscope io: option '--make': cannot create '%s': %s%s\n", path, strerror(e),
			e == EEXIST ? " (latscope never writes over an existing file)" : "");
		return EXIT_USAGE;
	}
	while (left && r == 0) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;
		for (size_t i = 0; i + 8u <= n; i += 8u) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			memcpy(buf + i, &rng, 8);
		}
		for (size_t done = 0; done < n && r == 0;) {
			ssize_t w = write(fd, buf + done, n - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				r = w < 0 ? -errno : -EIO;
			else
				done += (size_t)w;
		}
		left -= n;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	free(buf);
	if (r < 0) {
		unlink(path);           /* ours, and incomplete */
		tprintf(stderr, "latscope io: cannot write '%s': %s\n", path, strerror(-r));
		return EXIT_ERROR;
	}
	char sz[32];
	fmt_size(size, sz, sizeof(sz));
	tprintf(stdout, "wrote %s of random data to %s\n", sz, path);
	return EXIT_OK;
}

const struct measure_cmd io_command = {
	.synopsis = "PATH [--bs SIZE] [--pattern same|seq|random] [--direct|--buffered] [--buffer plain|hugepage]\n"
		    "                   [--engine psync|io_uring] [--depth N] [-D DURATION | -n COUNT] [-a CPUS]\n"
		    "                   [--json FILE] [--label KEY=VALUE]...\n"
		    "       latscope io --make FILE --size SIZE",
	.about = "Read PATH (a regular file or a block device) and measure throughput, the latency of every read\n"
		 "and what the reads cost the CPU: the time by category (user, system, irq, softirq, iowait,\n"
		 "steal, idle) of the whole machine and of the reading CPUs, latscope's own time, interrupts and\n"
		 "context switches, per read.  One reading thread, on the last CPU unless -a says otherwise.\n"
		 "latscope only ever reads PATH: it opens it read-only.",
	.ops = &io_probe,
	.opts = io_opts,
	.nopts = NOPTS,
	.params_size = sizeof(struct io_cmd),
	.run_offset = offsetof(struct io_cmd, run),
	.extras_offset = offsetof(struct io_cmd, out),
	.probe_offset = offsetof(struct io_cmd, p),
	.help_offset = offsetof(struct io_cmd, help),
	.path = check_path,
	.path_name = "PATH, the file or block device to read",
	.defaults = io_defaults,
	.validate = io_validate,
	.describe = io_describe,
	.notes = io_notes,
};

int cmd_io(int argc, char **argv)
{
	/* --make is a command of its own: nothing is measured. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--make") == 0 || strncmp(argv[i], "--make=", 7) == 0) {
			struct io_cmd c;
			struct opt_result given;
			struct lat_error err;
			memset(&c, 0, sizeof(c));
			io_defaults(&c);
			if (opt_parse(io_opts, NOPTS, argc, argv, &c, &given, &err) < 0)
				return storecmd_usage(measure_name(&io_command), err.msg);
			if (!c.make_size || given.npos)
				return storecmd_usage(measure_name(&io_command), given.npos ? "option '--make' takes no PATH to measure" :
									 "option '--make' needs '--size'");
			return make_file(c.make, c.make_size);
		}
	return measure_main(&io_command, argc, argv);
}
