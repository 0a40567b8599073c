#include <unistd.h>

#include "load/gen.h"

const struct gen_ops *gen_ops_for(enum load_kind kind)
{
	switch (kind) {
	case LOAD_CPU:
		return &gen_cpu;
	case LOAD_MEM:
		return &gen_mem;
	case LOAD_SYSCALL:
		return &gen_syscall;
	case LOAD_SCHED:
		return &gen_sched;
	case LOAD_IO:
		return &gen_io;
	case LOAD_CONSOLE:
		return &gen_console;
	}
	return NULL;
}

void gen_shared_init(struct gen_shared *s)
{
	s->fd = -1;
	s->master_fd = -1;
	s->slave_fd = -1;
	s->tty[0] = '\0';
}

void gen_shared_release(struct gen_shared *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->master_fd >= 0)
		close(s->master_fd);
	if (s->slave_fd >= 0)
		close(s->slave_fd);
	gen_shared_init(s);
}
