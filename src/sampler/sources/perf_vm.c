/* SPDX-License-Identifier: MIT */
/* perf_vm.c - the perf source's VMs (perf_int.h): following the VM set,
 * attaching groups to every thread of a VM's QEMU, retiring the groups of
 * exited threads into the VM's totals (idle). */
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
#include "perf_int.h"
#include "priv.h"

/* ---- VMs ------------------------------------------------------------- */

static void thr_close(struct perf *p, struct vthr *t)
{
	for (int c = 0; c < NCLS; c++)
		perf_grp_close(p, &t->g[c]);
}

static void vm_detach(struct perf *p, struct pvm *v)
{
	for (unsigned i = 0; i < v->nthr; i++)
		thr_close(p, &v->thr[i]);
	free(v->thr);
	v->thr = NULL;
	v->nthr = 0;
	if (v->taskfd >= 0)
		close(v->taskfd);
	v->taskfd = -1;
}

void perf_vm_free(struct perf *p, struct pvm *v)
{
	if (!v)
		return;
	vm_detach(p, v);
	free(v->name);
	free(v);
}

/* Add a thread's groups' current counts to the VM's retired totals and
 * close them. */
static void thr_retire(struct perf *p, struct pvm *v, struct vthr *t)
{
	for (int c = 0; c < NCLS; c++) {
		struct grp *g = &t->g[c];
		uint64_t ena = 0, run = 0;
		if (g->el && perf_grp_read(p, g, 0, p->vals, &ena, &run) == 0) {
			for (unsigned k = 0; k < g->nev; k++)
				v->retired[c][k] += p->vals[k];
			v->retired[c][MAXEV] += ena;
			v->retired[c][MAXEV + 1] += run;
		}
	}
	thr_close(p, t);
}

static int tid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* The threads of the VM's process now. */
static int list_tids(int taskfd, pid_t **out, unsigned *n)
{
	int d = dup(taskfd);
	pid_t *v = NULL;
	unsigned cnt = 0, cap = 0;
	if (d < 0)
		return -errno;
	DIR *dir = fdopendir(d);
	if (!dir) {
		close(d);
		return -errno;
	}
	rewinddir(dir);
	for (struct dirent *e; (e = readdir(dir));) {
		char *end;
		long t = strtol(e->d_name, &end, 10);
		if (*end || t <= 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			pid_t *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
		}
		v[cnt++] = (pid_t)t;
	}
	closedir(dir);
	if (cnt)
		qsort(v, cnt, sizeof(*v), tid_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

/* Open the VM's groups on every thread of its process.  All or nothing:
 * a thread left out would make the sums silently low (a thread that
 * exited meanwhile is no loss). */
static int vm_attach(struct perf *p, struct pvm *v)
{
	char path[32];
	struct stat st;
	pid_t *tids = NULL;
	unsigned ntid = 0;
	int r;

	snprintf(path, sizeof(path), "%d/task", (int)v->pid);
	v->taskfd = openat(p->proc_dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v->taskfd < 0)
		return -errno;
	if (fstat(v->taskfd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	v->nlink = st.st_nlink;
	r = list_tids(v->taskfd, &tids, &ntid);
	if (r < 0)
		goto fail;
	if (!perf_fd_reserve(p, ntid * p->vm.nok)) {
		r = -EMFILE;
		goto fail;
	}
	v->thr = calloc(ntid ? ntid : 1, sizeof(*v->thr));
	if (!v->thr) {
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < ntid; i++) {
		struct vthr *t = &v->thr[v->nthr];
		struct perf_thread_map *tm = perf_thread_map__new_array(1, &tids[i]);
		if (!tm) {
			r = -ENOMEM;
			goto fail;
		}
		t->tid = tids[i];
		r = 0;
		for (int c = 0; c < NCLS && r == 0; c++)
			if (p->vm.cls_n[c])
				r = perf_grp_open(p, &t->g[c], &p->vm, c, p->nocpu, tm, true);
		perf_thread_map__put(tm);
		if (r == -ESRCH) {
			thr_close(p, t); /* it exited since the listing */
			continue;
		}
		if (r < 0) {
			thr_close(p, t);
			goto fail;
		}
		v->nthr++;
	}
	free(tids);
	if (!v->nthr) {
		vm_detach(p, v);
		return -ESRCH;
	}
	return 0;
fail:
	free(tids);
	vm_detach(p, v);
	return r;
}

static struct pvm *vm_find(struct perf *p, const char *uuid)
{
	for (unsigned i = 0; i < p->nvm; i++)
		if (p->vms[i] && strcmp(p->vms[i]->uuid, uuid) == 0)
			return p->vms[i];
	return NULL;
}

static void vm_attach_log(struct perf *p, struct pvm *v)
{
	v->err = vm_attach(p, v);
	if (!v->err) {
		v->logged = false;
		return;
	}
	if (v->err == -EMFILE) {
		if (!p->fd_warned) {
			struct rlimit rl = {0, 0};
			getrlimit(RLIMIT_NOFILE, &rl);
			vms_warn("perf: too few file descriptors for the per-VM counters of VM %s (hard limit "
				 "%llu): its perf columns stay empty, and so do those of any later VM that "
				 "does not fit (raise the hard limit, e.g. LimitNOFILE=)",
				 v->name, (unsigned long long)rl.rlim_max);
			p->fd_warned = true;
		}
		v->logged = true;
	} else if (!v->logged && (v->err == -EACCES || v->err == -EPERM) &&
		   vms_priv_missing(vms_priv_perf_cap(), vms_priv_perf_off)) {
		v->logged = true;
	} else if (!v->logged && v->err != -ESRCH && v->err != -ENOENT) {
		/* ESRCH, ENOENT: the process is gone already, nothing to say */
		vms_warn("perf: cannot open the per-VM counters of VM %s (pid %d): %s (%s)", v->name,
			 (int)v->pid, perf_errname(v->err), strerror(-v->err));
		v->logged = true;
	}
}

/* Bring p->vms in line with the VM set tab (declare; NULL: none). */
int perf_vms_sync(struct perf *p, const struct vms_vmtab *tab)
{
	static const struct vms_vmtab none;
	if (!tab)
		tab = &none;
	struct pvm **nv = NULL;
	unsigned n = 0;

	if (!p->vm.nok) {
		/* no per-VM events: nothing to keep */
		for (unsigned i = 0; i < p->nvm; i++)
			perf_vm_free(p, p->vms[i]);
		p->nvm = 0;
		return 0;
	}
	if (tab->n) {
		nv = calloc(tab->n, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
	}
	for (unsigned i = 0; i < p->nvm; i++)
		p->vms[i]->seen = false;
	for (unsigned i = 0; i < tab->n; i++) {
		const struct vms_vm *t = &tab->vm[i];
		if (t->pid <= 0)
			continue; /* no process to count (remote, Xen, not running) */
		struct pvm *v = vm_find(p, t->uuid);
		if (!v) {
			v = calloc(1, sizeof(*v));
			if (!v)
				goto nomem;
			memcpy(v->uuid, t->uuid, sizeof(v->uuid));
			v->uuid[VMS_UUID_LEN] = '\0';
			v->taskfd = -1;
			v->pid = t->pid;
			v->name = strdup(t->name ? t->name : "");
			if (!v->name) {
				free(v);
				goto nomem;
			}
			vm_attach_log(p, v);
		} else if (v->pid != t->pid || (v->err && v->err != -ESRCH)) {
			/* a new QEMU process under the same UUID: the old one's
			 * counts stay in the totals, which keep growing */
			for (unsigned k = 0; k < v->nthr; k++)
				thr_retire(p, v, &v->thr[k]);
			vm_detach(p, v);
			v->pid = t->pid;
			vm_attach_log(p, v);
		}
		if (strcmp(v->name, t->name ? t->name : "") != 0) {
			char *s = strdup(t->name ? t->name : "");
			if (!s)
				goto nomem;
			free(v->name);
			v->name = s;
		}
		v->seen = true;
		nv[n++] = v;
	}
	for (unsigned i = 0; i < p->nvm; i++)
		if (!p->vms[i]->seen)
			perf_vm_free(p, p->vms[i]);
	free(p->vms);
	p->vms = nv;
	p->nvm = n;
	p->capvm = tab->n;
	return 0;
nomem:
	/* keep the old list; VMs made here and not in it are freed */
	for (unsigned i = 0; i < n; i++) {
		bool old = false;
		for (unsigned j = 0; j < p->nvm; j++)
			old |= p->vms[j] == nv[i];
		if (!old)
			perf_vm_free(p, nv[i]);
	}
	free(nv);
	return -ENOMEM;
}

/* Close the groups of exited threads when nothing can count into them any
 * more: every live thread of the process is one with groups of its own.
 * Returns false when exited threads' groups had to stay open (a thread is
 * not reaped yet, or threads created by exited ones are alive): idle()
 * looks again later. */
bool perf_vm_reap(struct perf *p, struct pvm *v)
{
	struct stat st;
	char name[16];
	unsigned alive = 0, dead = 0;

	if (v->taskfd < 0 || fstat(v->taskfd, &st) < 0)
		return true;
	unsigned threads = st.st_nlink > 2 ? (unsigned)(st.st_nlink - 2) : 0;
	for (unsigned i = 0; i < v->nthr; i++) {
		snprintf(name, sizeof(name), "%d", (int)v->thr[i].tid);
		if (faccessat(v->taskfd, name, F_OK, 0) == 0)
			alive++;
		else
			dead++;
	}
	/* threads is counted before the look at each thread: a thread
	 * created meanwhile comes from a live one */
	if (!dead)
		return true;
	if (threads != alive)
		return false;
	unsigned k = 0;
	for (unsigned i = 0; i < v->nthr; i++) {
		snprintf(name, sizeof(name), "%d", (int)v->thr[i].tid);
		if (faccessat(v->taskfd, name, F_OK, 0) == 0)
			v->thr[k++] = v->thr[i];
		else
			thr_retire(p, v, &v->thr[i]);
	}
	v->nthr = k;
	return true;
}
