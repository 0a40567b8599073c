#include "host/explain_json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "host/exitreason.h"

#define I(v) ((json_int_t)(v))

/* Appends v, taking it; on any failure the list is dropped (NULL) and so is v. */
static void append(json_t **arr, json_t *v)
{
	if (!*arr)
		json_decref(v);
	else if (json_array_append_new(*arr, v) < 0) {
		json_decref(*arr);
		*arr = NULL;
	}
}

static json_t *lists_json(const struct host_answer *a, json_t **ret_ran, json_t **ret_exits, json_t **ret_moves)
{
	json_t *st = json_array(), *ran = json_array(), *exits = json_array(), *moves = json_array();
	for (unsigned i = 0; i < a->nstretches; i++) {
		const struct host_stretch *s = &a->stretch[i];
		append(&st, json_pack("{s:I,s:I,s:s,s:i}", "from_ns", I(s->from), "to_ns", I(s->to), "state",
				      host_state_name((enum host_state)s->state), "cpu", s->cpu));
	}
	for (unsigned i = 0; i < a->nran; i++) {
		const struct host_ran *r = &a->ran[i];
		append(&ran, json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:I}", "kind", host_ran_kind_name((enum host_ran_kind)r->kind),
				       "comm", r->comm, "id", r->id, "prio", r->prio, "policy", r->policy, "cpu", r->cpu,
				       "ns", I(r->ns)));
	}
	for (unsigned i = 0; i < a->nexits; i++) {
		const struct host_exit_reason *x = &a->exits[i];
		const char *name = host_exit_reason_name(x->isa, x->reason);
		append(&exits, json_pack("{s:i,s:I,s:s?,s:i,s:I}", "isa", x->isa, "reason", I(x->reason), "name", name,
					 "count", I(x->count), "ns", I(x->ns)));
	}
	for (unsigned i = 0; i < a->migrations && i < HOST_MIGRATIONS; i++) {
		const struct host_migration *m = &a->migration[i];
		append(&moves, json_pack("{s:I,s:i,s:i}", "ts_ns", I(m->ts), "from_cpu", m->from_cpu, "to_cpu", m->to_cpu));
	}
	*ret_ran = ran;
	*ret_exits = exits;
	*ret_moves = moves;
	return st;
}

json_t *host_answer_to_json(const struct host_answer *a)
{
	json_t *ran, *exits, *moves, *st = lists_json(a, &ran, &exits, &moves);
	json_t *ns = json_object();
	for (unsigned s = 0; s < HOST_STATES && ns; s++)
		if (json_object_set_new(ns, host_state_name((enum host_state)s), json_integer(I(a->state_ns[s]))) < 0) {
			json_decref(ns);
			ns = NULL;
		}
	/* 'o' takes the lists, and json_pack drops them when it fails. */
	return json_pack("{s:i,s:i,s:s,s:I,s:I,s:I,s:b,s:I,s:I,s:I,s:b,s:b,s:o,s:I,s:I,s:o,s:i,s:o,s:I,s:o,s:i,s:I,s:i,s:o}",
			 "tid", a->q.tid, "vcpu", a->q.vcpu, "comm", a->comm, "from_ns", I(a->q.from), "to_ns", I(a->q.to),
			 "complete_from_ns", I(a->q.complete_from), "covered", a->covered,
			 "covered_from_ns", I(a->covered_from), "covered_to_ns", I(a->covered_to), "lost", I(a->lost),
			 "kvm", a->kvm, "inferred", a->inferred, "state_ns", ns, "not_running_ns", I(a->not_running_ns),
			 "in_host_ns", I(a->in_host_ns), "stretches", st, "stretches_more", a->stretches_more,
			 "ran", ran, "ran_other_ns", I(a->ran_other_ns), "exits", exits, "exits_total", a->exits_total,
			 "exits_other_ns", I(a->exits_other_ns), "migrations", a->migrations, "migration", moves);
}

/* The index of name among n names given by name_of; -1 when none. */
static int index_of(const char *name, unsigned n, const char *(*name_of)(unsigned))
{
	for (unsigned k = 0; k < n; k++)
		if (strcmp(name, name_of(k)) == 0)
			return (int)k;
	return -1;
}

static const char *state_name(unsigned k)
{
	return host_state_name((enum host_state)k);
}

static const char *kind_name(unsigned k)
{
	return host_ran_kind_name((enum host_ran_kind)k);
}

static int stretch_from(const json_t *v, void *out, struct lat_error *err)
{
	json_int_t from, to;
	const char *state;
	int cpu;
	if (json_unpack((json_t *)v, "{s:I,s:I,s:s,s:i}", "from_ns", &from, "to_ns", &to, "state", &state, "cpu", &cpu) < 0)
		return err_set(err, -EINVAL, "host answer: a stretch is not {from_ns, to_ns, state, cpu}");
	const int k = index_of(state, HOST_STATES, state_name);
	if (k < 0)
		return err_set(err, -EINVAL, "host answer: unknown state '%s'", state);
	*(struct host_stretch *)out = (struct host_stretch){ .from = (uint64_t)from, .to = (uint64_t)to,
							     .state = (uint8_t)k, .cpu = (uint8_t)cpu };
	return 0;
}

static int ran_from(const json_t *v, void *out, struct lat_error *err)
{
	const char *kind, *comm;
	int id, prio, policy, cpu;
	json_int_t ns;
	if (json_unpack((json_t *)v, "{s:s,s:s,s:i,s:i,s:i,s:i,s:I}", "kind", &kind, "comm", &comm, "id", &id, "prio",
			&prio, "policy", &policy, "cpu", &cpu, "ns", &ns) < 0)
		return err_set(err, -EINVAL, "host answer: a 'ran' entry is not {kind, comm, id, prio, policy, cpu, ns}");
	const int k = index_of(kind, HOST_RAN_KINDS, kind_name);
	if (k < 0)
		return err_set(err, -EINVAL, "host answer: unknown kind '%s'", kind);
	struct host_ran *r = out;
	*r = (struct host_ran){ .ns = (uint64_t)ns, .id = id, .prio = prio, .policy = policy, .kind = (uint8_t)k,
				.cpu = (uint8_t)cpu };
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	return 0;
}

static int exit_from(const json_t *v, void *out, struct lat_error *err)
{
	int isa;
	json_int_t reason, count, ns;
	if (json_unpack((json_t *)v, "{s:i,s:I,s:I,s:I}", "isa", &isa, "reason", &reason, "count", &count, "ns", &ns) < 0)
		return err_set(err, -EINVAL, "host answer: an exit is not {isa, reason, count, ns}");
	*(struct host_exit_reason *)out = (struct host_exit_reason){ .ns = (uint64_t)ns, .reason = (uint64_t)reason,
								     .count = (uint32_t)count, .isa = (uint8_t)isa };
	return 0;
}

static int move_from(const json_t *v, void *out, struct lat_error *err)
{
	json_int_t ts;
	int from, to;
	if (json_unpack((json_t *)v, "{s:I,s:i,s:i}", "ts_ns", &ts, "from_cpu", &from, "to_cpu", &to) < 0)
		return err_set(err, -EINVAL, "host answer: a migration is not {ts_ns, from_cpu, to_cpu}");
	*(struct host_migration *)out = (struct host_migration){ .ts = (uint64_t)ts, .from_cpu = (uint16_t)from,
								 .to_cpu = (uint16_t)to };
	return 0;
}

/* Each element of arr through f into out[], at most cap of them. */
static int each(const json_t *arr, size_t cap, size_t size, void *out, unsigned *ret_n,
		int (*f)(const json_t *, void *, struct lat_error *), const char *what, struct lat_error *err)
{
	if (!json_is_array(arr) || json_array_size(arr) > cap)
		return err_set(err, -EINVAL, "host answer: '%s' is not a list of at most %zu", what, cap);
	for (size_t i = 0; i < json_array_size(arr); i++) {
		int r = f(json_array_get(arr, i), (char *)out + i * size, err);
		if (r < 0)
			return r;
	}
	if (ret_n)
		*ret_n = (unsigned)json_array_size(arr);
	return 0;
}

static int lists_from(json_t *st, json_t *ran, json_t *exits, json_t *moves, struct host_answer *a, struct lat_error *err)
{
	int r = each(st, HOST_STRETCHES, sizeof(a->stretch[0]), a->stretch, &a->nstretches, stretch_from, "stretches", err);
	if (r == 0)
		r = each(ran, HOST_TOP, sizeof(a->ran[0]), a->ran, &a->nran, ran_from, "ran", err);
	if (r == 0)
		r = each(exits, HOST_REASONS, sizeof(a->exits[0]), a->exits, &a->nexits, exit_from, "exits", err);
	if (r == 0)
		r = each(moves, HOST_MIGRATIONS, sizeof(a->migration[0]), a->migration, NULL, move_from, "migration", err);
	return r;
}

int host_answer_from_json(const json_t *j, struct host_answer *ret, struct lat_error *err)
{
	struct host_answer a = { .covered = false };
	const char *comm;
	json_int_t from, to, complete, cfrom, cto, lost, nr, ih, rother, xother;
	int covered, kvm, inferred, more, xtotal, migrations;
	json_t *ns, *st, *ran, *exits, *moves;
	json_error_t je;
	if (json_unpack_ex((json_t *)j, &je, 0,
			   "{s:i,s:i,s:s,s:I,s:I,s:I,s:b,s:I,s:I,s:I,s:b,s:b,s:o,s:I,s:I,s:o,s:i,s:o,s:I,s:o,s:i,s:I,s:i,s:o}",
			   "tid", &a.q.tid, "vcpu", &a.q.vcpu, "comm", &comm, "from_ns", &from, "to_ns", &to,
			   "complete_from_ns", &complete, "covered", &covered, "covered_from_ns", &cfrom, "covered_to_ns", &cto,
			   "lost", &lost, "kvm", &kvm, "inferred", &inferred, "state_ns", &ns, "not_running_ns", &nr,
			   "in_host_ns", &ih, "stretches", &st, "stretches_more", &more, "ran", &ran, "ran_other_ns", &rother,
			   "exits", &exits, "exits_total", &xtotal, "exits_other_ns", &xother, "migrations", &migrations,
			   "migration", &moves) < 0)
		return err_set(err, -EINVAL, "host answer: %s", je.text);
	a.q.from = (uint64_t)from;
	a.q.to = (uint64_t)to;
	a.q.complete_from = (uint64_t)complete;
	snprintf(a.comm, sizeof(a.comm), "%s", comm);
	a.covered = covered;
	a.covered_from = (uint64_t)cfrom;
	a.covered_to = (uint64_t)cto;
	a.lost = (uint64_t)lost;
	a.kvm = kvm;
	a.inferred = inferred;
	a.not_running_ns = (uint64_t)nr;
	a.in_host_ns = (uint64_t)ih;
	a.stretches_more = (unsigned)more;
	a.ran_other_ns = (uint64_t)rother;
	a.exits_total = (uint32_t)xtotal;
	a.exits_other_ns = (uint64_t)xother;
	a.migrations = (uint32_t)migrations;
	for (unsigned s = 0; s < HOST_STATES; s++) {
		const json_t *v = json_object_get(ns, state_name(s));
		a.state_ns[s] = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	}
	int r = lists_from(st, ran, exits, moves, &a, err);
	if (r < 0)
		return r;
	*ret = a;
	return 0;
}
