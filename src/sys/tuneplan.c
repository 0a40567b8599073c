#include "sys/tuneplan.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sys/textfile.h"

void tune_plan_free(struct tune_plan *p)
{
	if (!p)
		return;
	free(p->w);
	memset(p, 0, sizeof(*p));
}

int tune_path(const struct tune_where *w, const char *rel, char *buf, size_t size)
{
	const char *root = w && w->sysroot ? w->sysroot : "";
	size_t len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--; /* "/" and "/tmp/x/" name the root without it */
	int n = snprintf(buf, size, "%.*s/%s", (int)len, root, rel);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int tune_read(const struct tune_where *w, const char *rel, char *buf, size_t size)
{
	char path[512];
	int r = tune_path(w, rel, path, sizeof(path));
	if (r < 0) {
		buf[0] = '\0';
		return r;
	}
	return textfile_read(path, buf, size);
}

bool tune_exists(const struct tune_where *w, const char *rel)
{
	char path[512];
	struct stat st;
	return tune_path(w, rel, path, sizeof(path)) == 0 && stat(path, &st) == 0;
}

int tune_plan_add(struct tune_plan *p, const char *rel, const char *value, bool optional)
{
	if (strlen(rel) >= sizeof(p->w->path) || strlen(value) >= sizeof(p->w->value))
		return -ENAMETOOLONG;
	/* The room doubles whenever n reaches a power of two: hundreds of IRQs, few copies. */
	if ((p->n & (p->n - 1)) == 0) {
		struct tune_write *w = realloc(p->w, (p->n ? 2 * p->n : 1) * sizeof(*w));
		if (!w)
			return -ENOMEM;
		p->w = w;
	}
	struct tune_write *t = &p->w[p->n++];
	memset(t, 0, sizeof(*t));
	strcpy(t->path, rel);
	strcpy(t->value, value);
	t->optional = optional;
	return 0;
}

/* text into dst, its end replaced by "..." when it does not fit. */
static void say_one(char *dst, size_t size, const char *text)
{
	size_t len = strlen(text);
	if (len < size) {
		memcpy(dst, text, len + 1);
		return;
	}
	memcpy(dst, text, size - 4);
	memcpy(dst + size - 4, "...", 4);
}

void tune_plan_say(struct tune_plan *p, const char *from, const char *to)
{
	say_one(p->from, sizeof(p->from), from);
	say_one(p->to, sizeof(p->to), to);
}

void tune_text_add(char *buf, size_t size, const char *value)
{
	size_t len = strlen(buf), vlen = strlen(value);
	for (const char *s = buf; (s = strstr(s, value)) != NULL; s += vlen)
		if ((s == buf || (s >= buf + 2 && s[-2] == ',' && s[-1] == ' ')) &&
		    (s[vlen] == '\0' || s[vlen] == ','))
			return;
	snprintf(buf + len, size - len, "%s%s", len ? ", " : "", value);
}

int tune_housekeeping(const struct tune_where *w, const struct cpuset *measured, struct cpuset *ret,
		      struct lat_error *why)
{
	char text[1024];
	struct cpuset online, none;
	int r = tune_read(w, "sys/devices/system/cpu/online", text, sizeof(text));
	if (r < 0 || cpuset_parse(text, &online) < 0)
		return err_set(why, -TUNE_NOT_HERE,
			       "not here: the online CPUs cannot be read "
			       "(/sys/devices/system/cpu/online)");
	cpuset_clear(&none);
	cpuset_diff(ret, &online, measured ? measured : &none);
	if (cpuset_count(ret) == 0)
		return err_set(
			why, -TUNE_NOT_HERE,
			"not here: every online CPU is measured, none is left to take the work");
	return 0;
}

size_t tune_mask_format(const struct cpuset *s, char *buf, size_t size)
{
	size_t len = 0;
	int top = -1;
	for (unsigned g = 0; g < CPUSET_MAX / 32u; g++)
		if ((s->bits[g / 2u] >> (32u * (g % 2u))) & 0xffffffffu)
			top = (int)g;
	if (size)
		buf[0] = '\0';
	if (top < 0)
		top = 0; /* the empty mask: "0" */
	for (int g = top; g >= 0; g--) {
		unsigned word =
			(unsigned)((s->bits[g / 2] >> (32u * ((unsigned)g % 2u))) & 0xffffffffu);
		char part[16];
		int n = snprintf(part, sizeof(part), g == top ? "%x" : ",%08x", word);
		if (len + (size_t)n < size)
			memcpy(buf + len, part, (size_t)n + 1);
		len += (size_t)n;
	}
	return len;
}

int tune_mask_parse(const char *text, struct cpuset *ret)
{
	struct cpuset s;
	unsigned bit = 0;
	size_t len = strlen(text);

	cpuset_clear(&s);
	if (len == 0)
		return -EINVAL;
	for (size_t i = len; i-- > 0;) {
		char c = text[i];
		if (c == ',')
			continue; /* the groups are whole: 8 digits each but the first */
		if (!isxdigit((unsigned char)c))
			return -EINVAL;
		unsigned v = (unsigned)(isdigit((unsigned char)c)
						? c - '0'
						: tolower((unsigned char)c) - 'a' + 10);
		for (unsigned k = 0; k < 4; k++) {
			if (!((v >> k) & 1u))
				continue;
			if (bit + k >= CPUSET_MAX)
				return -ERANGE;
			cpuset_add(&s, bit + k);
		}
		bit += 4;
	}
	*ret = s;
	return 0;
}
