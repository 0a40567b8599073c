#include "sys/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSEC_PER_SEC UINT64_C(1000000000)
#define FIRST_READ_SIZE 4096u

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_blanks(const char *p)
{
	while (is_blank(*p))
		p++;
	return p;
}

/* Digits at p as a uint64_t; -ERANGE past its range, -EINVAL without a digit.
 * ret_end: the first character after them. */
static int parse_u64(const char *p, uint64_t *ret, const char **ret_end)
{
	uint64_t v = 0;

	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10u)
			return -ERANGE;
		v = v * 10u + d;
	}
	*ret = v;
	*ret_end = p;
	return 0;
}

/*
 * Read path whole into *buf, NUL-terminated, growing it as needed: procfs
 * files report size 0, so their length is known only at end of file, and a
 * fixed buffer would cut a large machine's file short.
 */
static int read_whole(const char *path, char **buf, size_t *size, size_t *ret_len)
{
	size_t len = 0;
	int r = 0;

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (*size - len < 2) {
			size_t want = *size ? *size * 2 : FIRST_READ_SIZE;
			char *p = want > *size ? realloc(*buf, want) : NULL;
			if (!p) {
				r = -ENOMEM;
				break;
			}
			*buf = p;
			*size = want;
		}
		ssize_t n = read(fd, *buf + len, *size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (r < 0)
		return r;
	(*buf)[len] = '\0';
	*ret_len = len;
	return 0;
}

/*
 * Read path and split it into NUL-terminated lines in place.  procfs text
 * ends in a newline and holds no NUL: anything else was cut short or is not
 * such a file.  ret_end: one past the last line.
 */
static int load_lines(const char *path, char **buf, size_t *size, const char **ret_end)
{
	size_t len = 0;
	int r = read_whole(path, buf, size, &len);
	if (r < 0)
		return r;

	char *text = *buf;
	if (len == 0 || text[len - 1] != '\n' || strlen(text) != len)
		return -EINVAL;
	for (char *q = text; (q = memchr(q, '\n', (size_t)(text + len - q))) != NULL; q++)
		*q = '\0';
	*ret_end = text + len;
	return 0;
}

static const char *next_line(const char *line)
{
	return line + strlen(line) + 1;
}

/* Copy n bytes of src as a name, cut to fit. */
static void set_name(char name[PROC_NAME_LEN], const char *src, size_t n)
{
	if (n > PROC_NAME_LEN - 1)
		n = PROC_NAME_LEN - 1;
	memcpy(name, src, n);
	name[n] = '\0';
}

/*
 * The header "CPU0 CPU2 CPU5": record for each CPU of t the column that holds
 * it, or -1.  The kernel lists online CPUs in ascending order; the matching
 * below relies on it, so a header out of order is rejected.
 */
static int map_header(struct proc_table *t, const char *line, size_t *ret_ncols)
{
	const char *p = skip_blanks(line);
	size_t ncols = 0, k = 0;
	uint64_t prev = 0;

	if (*p == '\0')
		return -EINVAL;
	while (*p != '\0') {
		uint64_t cpu;
		const char *end;
		if (strncmp(p, "CPU", 3) != 0 || parse_u64(p + 3, &cpu, &end) < 0 ||
		    (*end != '\0' && !is_blank(*end)) || cpu > INT_MAX ||
		    (ncols > 0 && cpu <= prev) || ncols == INT_MAX)
			return -EINVAL;
		while (k < t->ncpus && (uint64_t)t->cpus[k] < cpu)
			t->col[k++] = -1;
		if (k < t->ncpus && (uint64_t)t->cpus[k] == cpu)
			t->col[k++] = (int)ncols;
		prev = cpu;
		ncols++;
		p = skip_blanks(end);
	}
	while (k < t->ncpus)
		t->col[k++] = -1;
	*ret_ncols = ncols;
	return 0;
}

/*
 * The counts at p, at most ncols of them.  A count is a run of digits ending
 * at a blank or the end of the line; the first other field ends the counts,
 * so a line with fewer columns than the header is read as far as it goes.
 * Each count whose column belongs to one of t's CPUs goes to row[k].
 * ret_n: the counts found; ret_tail: the text after them.
 */
static int scan_counts(const struct proc_table *t, const char *p, size_t ncols, uint64_t *row,
		       size_t *ret_n, const char **ret_tail)
{
	size_t n = 0, k = 0;

	for (;;) {
		const char *tok = skip_blanks(p);
		uint64_t v;
		const char *end;

		if (n == ncols || !is_digit(*tok)) {
			p = tok;
			break;
		}
		if (parse_u64(tok, &v, &end) < 0)
			return -EINVAL;
		if (*end != '\0' && !is_blank(*end)) {
			p = tok;        /* "12x4": not a count, the start of the text */
			break;
		}
		/* Both the header and t's CPUs ascend, so one walk matches them. */
		while (k < t->ncpus && (t->col[k] < 0 || (size_t)t->col[k] < n))
			k++;
		if (k < t->ncpus && (size_t)t->col[k] == n)
			row[k] = v;
		n++;
		p = end;
	}
	*ret_n = n;
	*ret_tail = p;
	return 0;
}

/*
 * Where the action list starts in the text after a numbered IRQ's counts
 * ("IO-APIC   5-edge      ttyS0").  The kernel prints two blanks before the
 * list, and an action name may hold a single one ("PCIe PME, pciehp"), so the
 * list is what follows the last run of two or more blanks.  Text without such
 * a run (hand-written) gives its last field, with any fields before it that
 * end in a comma.
 */
static const char *action_list(const char *s, const char *end)
{
	const char *start = NULL;

	for (const char *q = s; q + 1 < end; q++)
		if (is_blank(q[0]) && is_blank(q[1]))
			start = q + 2;
	if (start)
		return skip_blanks(start);

	start = end;
	while (start > s && !is_blank(start[-1]))
		start--;
	for (;;) {
		const char *f = start;
		while (f > s && is_blank(f[-1]))
			f--;
		if (f == start || f == s || f[-1] != ',')
			return start;
		while (f > s && !is_blank(f[-1]))
			f--;
		start = f;
	}
}

/* "24" and "virtio0-input.0" as "24 virtio0-input.0", cut to fit and never
 * ending in the ", " of a list cut in the middle. */
static void irq_name(char name[PROC_NAME_LEN], const char *num, size_t num_len,
		     const char *action, size_t action_len)
{
	set_name(name, num, num_len);
	size_t len = strlen(name);
	if (action_len == 0 || len + 2 > PROC_NAME_LEN)
		return;
	name[len++] = ' ';
	size_t n = action_len < PROC_NAME_LEN - 1 - len ? action_len : PROC_NAME_LEN - 1 - len;
	memcpy(name + len, action, n);
	len += n;
	while (name[len - 1] == ' ' || name[len - 1] == ',')
		len--;
	name[len] = '\0';
}

/*
 * One source line into row (zeroed here) and name: "  24:  1  0  IO-APIC
 * 5-edge  ttyS0", "LOC:  5678  9012   Local timer interrupts", "  TIMER:  123
 * 456".  irq: /proc/interrupts, where text may follow the counts; /proc/softirqs
 * has none.  1 for a source, 0 for a line to skip (blank, or a count that
 * belongs to no CPU).
 */
static int parse_line(const struct proc_table *t, const char *line, size_t ncols, bool irq,
		      uint64_t *row, char name[PROC_NAME_LEN])
{
	const char *p = skip_blanks(line);
	bool numbered = true;
	const char *colon;

	if (*p == '\0')
		return 0;
	for (colon = p; *colon != ':'; colon++) {
		char c = *colon;
		if (c == '\0' || !(is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
				   c == '_' || c == '-'))
			return -EINVAL;
		if (!is_digit(c))
			numbered = false;
	}
	if (colon == p)
		return -EINVAL;

	size_t n;
	const char *tail;
	if (t->ncpus > 0)
		memset(row, 0, t->ncpus * sizeof(*row));
	int r = scan_counts(t, colon + 1, ncols, row, &n, &tail);
	if (r < 0)
		return r;
	if (n == 0 || (!irq && *tail != '\0'))
		return -EINVAL;

	const char *tail_end = tail + strlen(tail);
	while (tail_end > tail && is_blank(tail_end[-1]))
		tail_end--;
	/* x86 ERR and MIS, arm64 Err: one system-wide count, no description. */
	if (irq && !numbered && n == 1 && tail == tail_end)
		return 0;
	if (irq && numbered) {
		const char *action = action_list(tail, tail_end);
		irq_name(name, p, (size_t)(colon - p), action, (size_t)(tail_end - action));
	} else {
		set_name(name, p, (size_t)(colon - p));
	}
	return 1;
}

/*
 * The row named name among the first nrows, or SIZE_MAX.  The file lists its
 * sources in the same order every time, so the row after the last one found
 * is tried first: a steady read finds every row at once instead of searching.
 */
static size_t find_row(const struct proc_table *t, size_t nrows, const char *name, size_t *cursor)
{
	if (*cursor < nrows && strcmp(t->names[*cursor], name) == 0)
		return (*cursor)++;
	for (size_t s = 0; s < nrows; s++)
		if (strcmp(t->names[s], name) == 0) {
			*cursor = s + 1;
			return s;
		}
	return SIZE_MAX;
}

static int grow(void **p, size_t n, size_t size)
{
	void *q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	return 0;
}

/* Room for want rows (and spare's scratch row past them); grows by half again
 * so that devices appearing one by one do not cost a realloc each.  A failure
 * leaves cap and the rows in use as they were. */
static int reserve_rows(struct proc_table *t, size_t want)
{
	size_t per_row = t->ncpus ? t->ncpus : 1;

	if (want <= t->cap)
		return 0;
	size_t cap = t->cap + t->cap / 2;
	if (cap < want)
		cap = want;
	if (cap >= SIZE_MAX / PROC_NAME_LEN || cap >= SIZE_MAX / sizeof(uint64_t) / per_row)
		return -ENOMEM;
	if (grow((void **)&t->names, cap, PROC_NAME_LEN) < 0 ||
	    grow((void **)&t->counts, cap * per_row, sizeof(uint64_t)) < 0 ||
	    grow((void **)&t->spare, (cap + 1) * per_row, sizeof(uint64_t)) < 0)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

/*
 * The counts go to the spare matrix and reach t->counts only once the whole
 * file has read well, so t is as it was after any error.  New sources are
 * named past t->nsrc, where nobody looks until then.  Each line is read into
 * the first unused row of spare (it always has one more than cap); a known
 * source's counts are then added to its row, and a new source keeps the row.
 */
static int read_table(struct proc_table *t, const char *path, bool irq)
{
	const char *end;
	size_t ncols, used = t->nsrc, cursor = 0;
	char name[PROC_NAME_LEN];

	int r = load_lines(path, &t->buf, &t->buf_size, &end);
	if (r < 0)
		return r;
	r = map_header(t, t->buf, &ncols);
	if (r < 0)
		return r;

	if (used > 0 && t->ncpus > 0)
		memset(t->spare, 0, used * t->ncpus * sizeof(*t->spare));
	for (const char *line = next_line(t->buf); line < end; line = next_line(line)) {
		uint64_t *slot = t->spare + used * t->ncpus;
		r = parse_line(t, line, ncols, irq, slot, name);
		if (r < 0)
			return r;
		if (r == 0)
			continue;

		size_t row = find_row(t, used, name, &cursor);
		if (row == SIZE_MAX) {
			r = reserve_rows(t, used + 1);        /* keeps the slot's counts */
			if (r < 0)
				return r;
			memcpy(t->names[used++], name, PROC_NAME_LEN);
			cursor = used;
		} else {
			/* A known source, or a name seen twice, which adds up. */
			uint64_t *dst = t->spare + row * t->ncpus;
			for (size_t k = 0; k < t->ncpus; k++)
				dst[k] += slot[k];
		}
	}
	if (used > 0 && t->ncpus > 0)
		memcpy(t->counts, t->spare, used * t->ncpus * sizeof(*t->counts));
	t->nsrc = used;
	return 0;
}

int proc_table_init(struct proc_table *t, const struct cpuset *cpus)
{
	size_t n = cpuset_count(cpus);
	/* One entry at least, so that an empty set still has non-NULL arrays. */
	int *list = malloc((n ? n : 1) * sizeof(*list));
	int *col = malloc((n ? n : 1) * sizeof(*col));
	uint64_t *spare = malloc((n ? n : 1) * sizeof(*spare));     /* the scratch row */

	if (!list || !col || !spare) {
		free(list);
		free(col);
		free(spare);
		return -ENOMEM;
	}
	size_t k = 0;
	cpuset_foreach(cpu, cpus)
		list[k++] = cpu;
	*t = (struct proc_table){ .ncpus = n, .cpus = list, .col = col, .spare = spare };
	return 0;
}

void proc_table_free(struct proc_table *t)
{
	free(t->cpus);
	free(t->names);
	free(t->counts);
	free(t->spare);
	free(t->col);
	free(t->buf);
	*t = (struct proc_table){ 0 };
}

int proc_read_interrupts(struct proc_table *t, const char *path)
{
	return read_table(t, path ? path : "/proc/interrupts", true);
}

int proc_read_softirqs(struct proc_table *t, const char *path)
{
	return read_table(t, path ? path : "/proc/softirqs", false);
}

uint64_t proc_table_total(const struct proc_table *t, size_t k)
{
	uint64_t sum = 0;

	if (k >= t->ncpus)
		return 0;
	for (size_t s = 0; s < t->nsrc; s++)
		sum += t->counts[s * t->ncpus + k];
	return sum;
}

uint64_t proc_table_get(const struct proc_table *t, const char *name, size_t k)
{
	size_t cursor = 0;

	if (k >= t->ncpus)
		return 0;
	size_t s = find_row(t, t->nsrc, name, &cursor);
	return s == SIZE_MAX ? 0 : t->counts[s * t->ncpus + k];
}

/* The k with t->cpus[k] == cpu (the list ascends), or SIZE_MAX. */
static size_t cpu_index(const struct proc_table *t, uint64_t cpu)
{
	size_t lo = 0, hi = t->ncpus;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uint64_t)t->cpus[mid] < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->ncpus && (uint64_t)t->cpus[lo] == cpu ? lo : SIZE_MAX;
}

/*
 * "cpu3 user nice system idle iowait irq softirq steal ...": 1 with the CPU
 * and its steal ticks, 0 for any other line (the "cpu " total included).
 * Steal came in Linux 2.6.11; a line without it is not one we can read.
 */
const char *const cpu_time_names[CPU_TIME_KINDS] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
};

/*
 * A "cpuN" line (1, *ret_cpu = N) or the machine's "cpu" line (2), with its
 * first 8 values in USER_HZ ticks; 0 for other lines, -EINVAL for a broken one.
 */
static int parse_cpu_line(const char *line, uint64_t *ret_cpu, uint64_t ret_ticks[CPU_TIME_KINDS])
{
	uint64_t cpu = 0, v[CPU_TIME_KINDS];
	const char *p = line + 3;
	int kind;

	if (strncmp(line, "cpu", 3) != 0)
		return 0;
	if (is_blank(line[3])) {
		kind = 2;
	} else if (is_digit(line[3])) {
		if (parse_u64(line + 3, &cpu, &p) < 0 || !is_blank(*p))
			return -EINVAL;
		kind = 1;
	} else {
		return 0;
	}
	for (int i = 0; i < CPU_TIME_KINDS; i++) {
		p = skip_blanks(p);
		if (parse_u64(p, &v[i], &p) < 0 || (*p != '\0' && !is_blank(*p)))
			return -EINVAL;
	}
	*ret_cpu = cpu;
	memcpy(ret_ticks, v, sizeof(v));
	return kind;
}

static uint64_t ticks_to_ns(uint64_t ticks, uint64_t hz)
{
	/* Split so that ticks * 1e9 cannot overflow for any real uptime. */
	return ticks / hz * NSEC_PER_SEC + ticks % hz * NSEC_PER_SEC / hz;
}

/* "key N ...": 1 with N when line is key's, 0 for another line. */
static int first_number(const char *line, const char *key, uint64_t *ret)
{
	size_t n = strlen(key);
	const char *p;

	if (strncmp(line, key, n) != 0 || !is_blank(line[n]))
		return 0;
	return parse_u64(skip_blanks(line + n), ret, &p) < 0 ? -EINVAL : 1;
}

int proc_read_stat(struct proc_table *t, struct cpu_times *ret, struct proc_stat *ret_machine, const char *path)
{
	long clk_tck = sysconf(_SC_CLK_TCK);
	const char *end;
	uint64_t cpu, ticks[CPU_TIME_KINDS], v;
	struct proc_stat m;
	size_t lines = 0;
	bool total = false;

	if (clk_tck <= 0)
		return -EINVAL;
	int r = load_lines(path ? path : "/proc/stat", &t->buf, &t->buf_size, &end);
	if (r < 0)
		return r;
	/* Checked whole first, so nothing is written unless all of it is good. */
	memset(&m, 0, sizeof(m));
	for (const char *line = t->buf; line < end; line = next_line(line)) {
		r = parse_cpu_line(line, &cpu, ticks);
		if (r < 0)
			return r;
		lines += r == 1;
		total |= r == 2;
		if ((r = first_number(line, "intr", &v)) < 0)
			return r;
		m.intr = r ? v : m.intr;
		if ((r = first_number(line, "softirq", &v)) < 0)
			return r;
		m.softirq = r ? v : m.softirq;
		if ((r = first_number(line, "ctxt", &v)) < 0)
			return r;
		m.ctxt = r ? v : m.ctxt;
	}
	if (lines == 0 || (ret_machine && !total))
		return -EINVAL;

	uint64_t hz = (uint64_t)clk_tck;
	if (ret)
		memset(ret, 0, t->ncpus * sizeof(*ret));
	for (const char *line = t->buf; line < end; line = next_line(line)) {
		int kind = parse_cpu_line(line, &cpu, ticks);
		struct cpu_times *dst = NULL;
		if (kind == 2)
			dst = &m.cpu;
		else if (kind == 1 && ret) {
			size_t k = cpu_index(t, cpu);
			dst = k != SIZE_MAX ? &ret[k] : NULL;
		}
		for (int i = 0; dst && i < CPU_TIME_KINDS; i++)
			dst->ns[i] = ticks_to_ns(ticks[i], hz);
	}
	if (ret_machine)
		*ret_machine = m;
	return 0;
}

int proc_read_steal(struct proc_table *t, uint64_t *ret_ns, const char *path)
{
	struct cpu_times *times = calloc(t->ncpus ? t->ncpus : 1u, sizeof(*times));
	int r = times ? proc_read_stat(t, times, NULL, path) : -ENOMEM;

	for (size_t k = 0; r == 0 && k < t->ncpus; k++)
		ret_ns[k] = times[k].ns[CPU_STEAL];
	free(times);
	return r;
}

/* "key:\tvalue": 1 with the value when line holds key, 0 when it holds another. */
static int status_field(const char *line, const char *key, uint64_t *ret)
{
	size_t n = strlen(key);
	const char *end;

	if (strncmp(line, key, n) != 0 || line[n] != ':')
		return 0;
	if (parse_u64(skip_blanks(line + n + 1), ret, &end) < 0 || *skip_blanks(end) != '\0')
		return -EINVAL;
	return 1;
}

int proc_thread_switches(pid_t tid, uint64_t *ret_voluntary, uint64_t *ret_involuntary)
{
	char path[64];
	char *buf = NULL;
	size_t size = 0;
	const char *end;
	uint64_t vol = 0, invol = 0;
	int have_vol = 0, have_invol = 0;

	if (tid <= 0)
		return -EINVAL;
	/* A thread id names its thread under /proc too: this process's or, for attach, another's. */
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	/* A small file, read into a buffer of its own: the status file of a thread
	 * on a large machine has long CPU masks, so no fixed size is safe. */
	int r = load_lines(path, &buf, &size, &end);
	for (const char *line = buf; r == 0 && line < end; line = next_line(line)) {
		int v = status_field(line, "voluntary_ctxt_switches", &vol);
		int nv = v == 0 ? status_field(line, "nonvoluntary_ctxt_switches", &invol) : 0;
		if (v < 0 || nv < 0)
			r = -EINVAL;
		have_vol |= v > 0;
		have_invol |= nv > 0;
	}
	free(buf);
	if (r < 0)
		return r;
	if (!have_vol || !have_invol)
		return -EINVAL;
	*ret_voluntary = vol;
	*ret_involuntary = invol;
	return 0;
}
