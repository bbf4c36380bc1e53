/* SPDX-License-Identifier: MIT */
/* bpf_interf.c - the interference program's loader (bpf_interf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_interf.h"
/* the skeleton holds the program's object as one string literal, and
 * bpftool declares a struct for each data section, empty for a section of
 * constants the compiler made (.rodata.cst16) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#pragma GCC diagnostic ignored "-Wpedantic"
#include "interf.skel.h"
#pragma GCC diagnostic pop

struct vms_interf {
	struct interf *skel;
	int fd_threads, fd_vms, fd_acct, fd_stats, fd_waits;
};

/* libbpf's own messages stay quiet: the reason is said once, by the
 * caller, from the error returned */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int vms_interf_open(struct vms_interf **out, char *err, size_t errlen)
{
	struct vms_interf *x = calloc(1, sizeof(*x));
	int r;
	*out = NULL;
	if (!x) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	libbpf_set_print(quiet);
	x->skel = interf__open();
	if (!x->skel) {
		r = -errno;
		snprintf(err, errlen, "cannot open the BPF program: %s", strerror(-r));
		goto fail;
	}
	/* the per-CPU state: one entry per possible CPU */
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu > 0 && ncpu <= INTERF_MAX_CPUS)
		bpf_map__set_max_entries(x->skel->maps.cpus, (uint32_t)ncpu);
	r = interf__load(x->skel);
	if (r) {
		snprintf(err, errlen, "cannot load the BPF program: %s%s", strerror(-r),
			 r == -EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON)" : "");
		goto fail;
	}
	r = interf__attach(x->skel);
	if (r) {
		snprintf(err, errlen, "cannot attach to the sched tracepoints: %s", strerror(-r));
		goto fail;
	}
	x->fd_threads = bpf_map__fd(x->skel->maps.threads);
	x->fd_vms = bpf_map__fd(x->skel->maps.vms);
	x->fd_acct = bpf_map__fd(x->skel->maps.acct);
	x->fd_stats = bpf_map__fd(x->skel->maps.stats);
	x->fd_waits = bpf_map__fd(x->skel->maps.waits);
	*out = x;
	return 0;
fail:
	vms_interf_close(x);
	return r < 0 ? r : -EINVAL;
}

void vms_interf_close(struct vms_interf *x)
{
	if (!x)
		return;
	interf__destroy(x->skel);
	free(x);
}

static int update(int fd, const void *k, const void *v)
{
	if (bpf_map_update_elem(fd, k, v, BPF_ANY) == 0)
		return 0;
	return errno == E2BIG || errno == ENOMEM ? -E2BIG : -errno;
}

int vms_interf_thread(struct vms_interf *x, uint32_t tid, uint32_t vm, bool victim)
{
	struct interf_thread t = {.vm = vm, .role = victim ? INTERF_VICTIM : INTERF_MEMBER};
	return update(x->fd_threads, &tid, &t);
}

int vms_interf_forget_thread(struct vms_interf *x, uint32_t tid)
{
	return bpf_map_delete_elem(x->fd_threads, &tid) == 0 || errno == ENOENT ? 0 : -errno;
}

int vms_interf_vm(struct vms_interf *x, uint32_t tgid, uint32_t vm)
{
	return update(x->fd_vms, &tgid, &vm);
}

int vms_interf_forget_vm(struct vms_interf *x, uint32_t tgid)
{
	return bpf_map_delete_elem(x->fd_vms, &tgid) == 0 || errno == ENOENT ? 0 : -errno;
}

int vms_interf_forget_account(struct vms_interf *x, uint32_t vm)
{
	struct interf_key k, next;
	const struct interf_key *prev = NULL;
	bool have = false;
	/* deleting the key just visited would lose the walk's place: delete
	 * each one after stepping past it */
	while (bpf_map_get_next_key(x->fd_acct, prev, &next) == 0) {
		if (have && bpf_map_delete_elem(x->fd_acct, &k) != 0 && errno != ENOENT)
			return -errno;
		have = next.victim == vm || (next.kind == INTERF_VM && next.id == vm);
		k = next;
		prev = &k;
	}
	if (have && bpf_map_delete_elem(x->fd_acct, &k) != 0 && errno != ENOENT)
		return -errno;
	struct interf_wkey w, wn;
	const struct interf_wkey *wp = NULL;
	have = false;
	while (bpf_map_get_next_key(x->fd_waits, wp, &wn) == 0) {
		if (have && bpf_map_delete_elem(x->fd_waits, &w) != 0 && errno != ENOENT)
			return -errno;
		have = wn.vm == vm;
		w = wn;
		wp = &w;
	}
	if (have && bpf_map_delete_elem(x->fd_waits, &w) != 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int vms_interf_read_waits(struct vms_interf *x, struct vms_interf_wait *out, unsigned cap, unsigned *n)
{
	struct interf_wkey k, next;
	const struct interf_wkey *prev = NULL;
	unsigned got = 0;
	while (bpf_map_get_next_key(x->fd_waits, prev, &next) == 0) {
		uint64_t v;
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(x->fd_waits, &k, &v) != 0)
			continue;
		if (got == cap) {
			*n = got;
			return -ENOSPC;
		}
		out[got++] = (struct vms_interf_wait){.vm = k.vm, .cpu = k.cpu, .ns = v};
	}
	*n = got;
	return 0;
}

int vms_interf_read(struct vms_interf *x, struct vms_interf_ent *out, unsigned cap, unsigned *n)
{
	struct interf_key k, next;
	const struct interf_key *prev = NULL;
	unsigned got = 0;
	bool more = false;
	while (bpf_map_get_next_key(x->fd_acct, prev, &next) == 0) {
		uint64_t v;
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(x->fd_acct, &k, &v) != 0)
			continue; /* deleted meanwhile */
		if (got == cap) {
			more = true;
			break;
		}
		out[got++] = (struct vms_interf_ent){.victim = k.victim, .kind = k.kind, .id = k.id, .ns = v};
	}
	*n = got;
	return more ? -ENOSPC : 0;
}

int vms_interf_waited(struct vms_interf *x, uint32_t tid, uint64_t *ns)
{
	struct interf_thread t;
	if (bpf_map_lookup_elem(x->fd_threads, &tid, &t) != 0)
		return -errno;
	*ns = t.waited;
	return 0;
}

int vms_interf_stats(struct vms_interf *x, uint64_t *lost_ns, uint64_t *overflows)
{
	uint32_t k0 = 0, k1 = 1;
	if (bpf_map_lookup_elem(x->fd_stats, &k0, lost_ns) != 0 ||
	    bpf_map_lookup_elem(x->fd_stats, &k1, overflows) != 0)
		return -errno;
	return 0;
}
