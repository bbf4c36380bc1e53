/* SPDX-License-Identifier: MIT */
/* source_perf.c - the perf source's ops: open (the probe of the
 * configured events), declare (the columns of the host and of each VM),
 * the tick (one read(2) per group, raw counts with their enabled and
 * running times), idle and close.  The design (groups, classes, threads
 * of a VM, libperf) is described in perf_int.h. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "name.h"
#include "perf_int.h"

/* time columns of each class's group: time_enabled, tp_time_enabled, ... */
static const char *const cls_prefix[NCLS] = {"", "tp_", "hw_"};
static const char *const cls_name[NCLS] = {"software", "tracepoint", "hardware"};
_Static_assert(VMS_PERF_SOFTWARE == 0 && VMS_PERF_TRACEPOINT == 1 && VMS_PERF_HARDWARE == 2,
	       "classes index cls_prefix");

/* ---- the source -------------------------------------------------------- */

static int perf_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct perf *p = src->priv;
	const struct vms_source_conf *sc = src->sconf;
	int r;

	p->selffd = -1;
	p->proc_dirfd = src->proc_dirfd;
	p->inherit_thread = true;
	if (!sc)
		return -EINVAL;
	p->per_cpu = sc->per_cpu;
	p->vm_every = vms_cadence_ticks(sc->vm_interval_ns, src->conf->interval_ns);
	libperf_init(perf_libperf_print);
	p->selffd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->selffd < 0)
		return -errno;
	p->cpus = perf_cpu_map__new(NULL);
	p->nocpu = perf_cpu_map__dummy_new();
	p->nothread = perf_thread_map__new_dummy();
	if (!p->cpus || !p->nocpu || !p->nothread)
		return -ENOMEM;
	p->ncpu = (unsigned)perf_cpu_map__nr(p->cpus);

	r = perf_evset_init(p, &p->host, &sc->host, false);
	if (r == 0)
		r = perf_evset_init(p, &p->vm, &sc->vm, true);
	if (r < 0) {
		src->fatal = true;
		return r;
	}

	/* host groups: ncpu fds per event */
	p->fds_counted = false;
	if (p->host.nok) {
		unsigned keep = p->host.nok;
		while (keep && !perf_fd_reserve(p, keep * p->ncpu))
			keep--;
		if (keep < p->host.nok) {
			vms_warn("perf: too few file descriptors for %u host events on %u CPUs: only the "
				 "first %u are counted",
				 p->host.nok, p->ncpu, keep);
			for (unsigned i = 0; i < p->host.n; i++)
				if (p->host.ev[i].required && p->host.ev[i].ok && p->host.ev[i].col >= keep) {
					src->fatal = true;
					return -EMFILE;
				}
			perf_evset_drop(&p->host, keep);
		}
	}
	for (int c = 0; c < NCLS; c++) {
		if (!p->host.cls_n[c])
			continue;
		r = perf_grp_open(p, &p->hg[c], &p->host, c, p->cpus, p->nothread, false);
		if (r < 0) {
			/* each event opened alone: the group as a whole did not
			 * (more hardware events than the PMU has counters) */
			bool req = false;
			for (unsigned k = 0; k < p->host.cls_n[c]; k++)
				req |= p->host.ev[p->host.cls_ev[c][k]].required;
			vms_log(req ? VMS_LOG_ERR : VMS_LOG_WARN,
				"perf: the %s host events cannot be counted as one group: %s (%s)%s",
				cls_name[c], perf_errname(r), strerror(-r),
				req ? "" : "; their columns are left out");
			if (req) {
				src->fatal = true;
				return r == -EINVAL ? -EOPNOTSUPP : r;
			}
			for (unsigned k = 0; k < p->host.cls_n[c]; k++)
				p->host.ev[p->host.cls_ev[c][k]].ok = false;
			perf_evset_drop(&p->host, MAXEV);
		}
	}
	return 0;
}

/* The columns of one block: "perf.<a>.<col>", or "vm.<a>.perf.<col>"
 * with the VM's UUID as key. */
static void declare_col(struct vms_schema_builder *b, const struct vms_coldef *d, const char *a,
			const char *col)
{
	vms_schema_addc(b, d, d->key ? VMS_G_VMPERF : VMS_G_PERF, a, NULL, col);
}

static void declare_block(struct vms_schema_builder *b, const struct evset *es, const char *key,
			  const char *a)
{
	for (unsigned i = 0; i < es->n; i++) {
		const struct pev *e = &es->ev[i];
		if (!e->ok)
			continue;
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = e->spec.unit, .wrap_bits = 64, .key = key};
		declare_col(b, &d, a, e->spec.name);
	}
	for (int c = 0; c < NCLS; c++) {
		if (!es->cls_n[c])
			continue;
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64, .key = key};
		char n1[32], n2[32];
		snprintf(n1, sizeof(n1), "%stime_enabled", cls_prefix[c]);
		snprintf(n2, sizeof(n2), "%stime_running", cls_prefix[c]);
		declare_col(b, &d, a, n1);
		declare_col(b, &d, a, n2);
	}
}

static int perf_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	struct perf *p = src->priv;
	char cpu[16];

	p->vmgen = vms_vmtab_gen(env->vms);
	p->fds_counted = false; /* counted when a VM is attached */
	int r = perf_vms_sync(p, env->vms);
	if (r < 0)
		return r;
	if (p->host.nok) {
		for (unsigned i = 0; p->per_cpu && i < p->ncpu; i++) {
			snprintf(cpu, sizeof(cpu), "cpu%d", perf_cpu_of(p, i));
			declare_block(b, &p->host, NULL, cpu);
		}
		declare_block(b, &p->host, NULL, "all");
	}
	char cn[VMS_NAME_PART_MAX + 1];
	for (unsigned i = 0; i < p->nvm; i++) {
		vms_vm_colname(cn, p->vms[i]->name); /* the vm source says when it is shortened */
		declare_block(b, &p->vm, p->vms[i]->uuid, cn);
	}
	return b->err;
}

/* Time columns and the multiplexing mark of one group read. */
static void times_out(uint64_t *blk, unsigned tcol, uint64_t ena, uint64_t run, uint64_t prev[2],
		      struct vms_tick_ctx *t)
{
	if (blk) {
		blk[tcol] = ena;
		blk[tcol + 1] = run;
	}
	if (ena - prev[0] > run - prev[1])
		t->flags |= VMS_FRAME_SCALED;
	prev[0] = ena;
	prev[1] = run;
}

static void sample_host(struct perf *p, uint64_t *slots, struct vms_tick_ctx *t)
{
	const struct evset *es = &p->host;
	unsigned w = es->width;
	uint64_t *all = slots + (p->per_cpu ? p->ncpu * w : 0);

	memset(p->acc, 0, w * sizeof(p->acc[0]));
	memset(p->none, 0, w * sizeof(p->none[0]));
	for (int c = 0; c < NCLS; c++) {
		struct grp *g = &p->hg[c];
		if (!es->cls_n[c])
			continue;
		for (unsigned i = 0; i < p->ncpu; i++) {
			uint64_t *blk = p->per_cpu ? slots + i * w : NULL;
			uint64_t ena = 0, run = 0;
			bool ok = perf_grp_read(p, g, i, p->vals, &ena, &run) == 0;
			if (ok)
				times_out(blk, es->tcol[c], ena, run, g->prev[i], t);
			/* enabled but never on a counter: no estimate */
			bool known = ok && !(ena > 0 && run == 0);
			for (unsigned k = 0; k < g->nev; k++) {
				unsigned col = es->ev[es->cls_ev[c][k]].col;
				if (blk)
					blk[col] = known ? p->vals[k] : VMS_NONE;
				if (known)
					p->acc[col] += p->vals[k];
				else
					p->none[col] = true;
			}
			if (!ok) {
				if (blk)
					blk[es->tcol[c]] = blk[es->tcol[c] + 1] = VMS_NONE;
				p->none[es->tcol[c]] = p->none[es->tcol[c] + 1] = true;
			} else {
				p->acc[es->tcol[c]] += ena;
				p->acc[es->tcol[c] + 1] += run;
			}
		}
	}
	for (unsigned k = 0; k < w; k++)
		all[k] = p->none[k] ? VMS_NONE : p->acc[k];
}

static void sample_vm(struct perf *p, struct pvm *v, uint64_t *blk, struct vms_tick_ctx *t)
{
	const struct evset *es = &p->vm;
	unsigned w = es->width;
	struct stat st;

	if (v->taskfd < 0 && !v->nthr) {
		vms_slots_none(blk, w);
		return;
	}
	if (v->taskfd >= 0 && fstat(v->taskfd, &st) == 0 && st.st_nlink != v->nlink) {
		v->nlink = st.st_nlink;
		v->check = true;
		p->check = true;
	}
	for (int c = 0; c < NCLS; c++) {
		bool none = false;
		if (!es->cls_n[c])
			continue;
		uint64_t ena = v->retired[c][MAXEV], run = v->retired[c][MAXEV + 1];
		for (unsigned k = 0; k < es->cls_n[c]; k++)
			p->acc[k] = v->retired[c][k];
		for (unsigned i = 0; i < v->nthr; i++) {
			struct grp *g = &v->thr[i].g[c];
			uint64_t e = 0, r = 0;
			if (!g->el)
				continue;
			if (perf_grp_read(p, g, 0, p->vals, &e, &r) < 0) {
				none = true;
				continue;
			}
			/* enabled but never on a counter: no estimate */
			if (e > 0 && r == 0)
				none = true;
			ena += e;
			run += r;
			for (unsigned k = 0; k < g->nev; k++)
				p->acc[k] += p->vals[k];
		}
		for (unsigned k = 0; k < es->cls_n[c]; k++)
			blk[es->ev[es->cls_ev[c][k]].col] = none ? VMS_NONE : p->acc[k];
		times_out(blk, es->tcol[c], ena, run, v->prev[c], t);
	}
}

static int perf_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct perf *p = src->priv;
	if (vms_vmtab_gen(t->vms) != p->vmgen)
		return VMS_RESCHEMA;
	if (p->host.nok) {
		sample_host(p, slots, t);
		slots += (p->per_cpu ? p->ncpu + 1 : 1) * p->host.width;
	}
	/* each VM's groups every vm_every ticks, the VMs spread over them so
	 * that each tick reads its share; a VM not read has its columns
	 * missing (its counts go on: the next read has them) */
	for (unsigned i = 0; i < p->nvm; i++) {
		if (vms_cadence_due(t->idx, i, p->vm_every))
			sample_vm(p, p->vms[i], slots, t);
		else
			vms_slots_none(slots, p->vm.width);
		slots += p->vm.width;
	}
	return 0;
}

static void perf_idle(struct vms_source *src, uint64_t until_ns, const struct vms_source_env *env)
{
	struct perf *p = src->priv;
	(void)until_ns;
	(void)env;
	if (!p->check)
		return;
	p->check = false;
	for (unsigned i = 0; i < p->nvm; i++) {
		struct pvm *v = p->vms[i];
		if (v->check && perf_vm_reap(p, v))
			v->check = false;
		p->check |= v->check;
	}
}

static void perf_close(struct vms_source *src)
{
	struct perf *p = src->priv;
	for (unsigned i = 0; i < p->nvm; i++)
		perf_vm_free(p, p->vms[i]);
	free(p->vms);
	p->vms = NULL;
	p->nvm = 0;
	for (int c = 0; c < NCLS; c++)
		perf_grp_close(p, &p->hg[c]);
	perf_cpu_map__put(p->cpus);
	perf_cpu_map__put(p->nocpu);
	perf_thread_map__put(p->nothread);
	p->cpus = p->nocpu = NULL;
	p->nothread = NULL;
	if (p->selffd >= 0)
		close(p->selffd);
	p->selffd = -1;
}

VMS_SOURCE_OPS(perf, perf, .idle = perf_idle);
