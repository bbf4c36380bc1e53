/* SPDX-License-Identifier: MIT */
#include "vm_kernel.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfile.h"

/* ---- layout -------------------------------------------------------------- */

void vms_vmlay_init(struct vms_vmlay *l, unsigned nvcpu, unsigned ntap, unsigned ndisk, bool iocg,
		    bool check)
{
	int32_t c = 0;
	l->nvcpu = (uint16_t)nvcpu;
	l->ntap = (uint16_t)ntap;
	l->ndisk = (uint16_t)ndisk;
	l->state = c++;
	l->path = c++;
	l->cpu = c;
	c += 3;
	l->vcpu = c;
	c += VMS_VM_VCPU_FIELDS * (int32_t)nvcpu;
	l->net = c;
	c += VMS_VM_NET_FIELDS * (int32_t)ntap;
	l->io = c;
	c += 2;
	l->iocg = -1;
	if (iocg) {
		l->iocg = c;
		c += 2;
	}
	l->mem = c;
	c += 2;
	l->balloon = c;
	c += VMS_VM_NBALLOON;
	l->block = c;
	c += VMS_VM_NBLOCK * (int32_t)ndisk;
	l->check = -1;
	if (check) {
		l->check = c;
		c += 3 + 2 * (int32_t)nvcpu;
	}
	l->slow_t = c++;
	l->ncol = (uint32_t)c;
}

int32_t vms_vmlay_col(const struct vms_vmlay *l, unsigned m, unsigned idx)
{
	if (m >= VMS_VM_CPU_TIME && m <= VMS_VM_CPU_SYSTEM)
		return l->cpu + (int32_t)(m - VMS_VM_CPU_TIME);
	if (m >= VMS_VM_VCPU_TIME && m <= VMS_VM_VCPU_SLICES)
		return idx < l->nvcpu ?
			       l->vcpu + (int32_t)(idx * VMS_VM_VCPU_FIELDS + m - VMS_VM_VCPU_TIME) :
			       -1;
	if (m >= VMS_VM_NET_RX_BYTES && m <= VMS_VM_NET_TX_DROP)
		return idx < l->ntap ? l->net + (int32_t)(idx * VMS_VM_NET_FIELDS + m - VMS_VM_NET_RX_BYTES) :
				       -1;
	if (m == VMS_VM_IO_READ || m == VMS_VM_IO_WRITE)
		return l->io + (int32_t)(m - VMS_VM_IO_READ);
	if (m == VMS_VM_IO_CG_READ || m == VMS_VM_IO_CG_WRITE)
		return l->iocg < 0 ? -1 : l->iocg + (int32_t)(m - VMS_VM_IO_CG_READ);
	if (m == VMS_VM_MEM_RSS || m == VMS_VM_MEM_CGROUP)
		return l->mem + (int32_t)(m - VMS_VM_MEM_RSS);
	if (m >= VMS_VM_BALLOON_CURRENT && m < VMS_VM_BALLOON_CURRENT + VMS_VM_NBALLOON)
		return l->balloon + (int32_t)(m - VMS_VM_BALLOON_CURRENT);
	if (m >= VMS_VM_BLOCK_RD_REQS && m < VMS_VM_BLOCK_RD_REQS + VMS_VM_NBLOCK)
		return idx < l->ndisk ? l->block + (int32_t)(idx * VMS_VM_NBLOCK + m - VMS_VM_BLOCK_RD_REQS) : -1;
	if (l->check < 0)
		return -1;
	if (m >= VMS_VM_CHECK_CPU_TIME && m <= VMS_VM_CHECK_CPU_SYSTEM)
		return l->check + (int32_t)(m - VMS_VM_CHECK_CPU_TIME);
	if ((m == VMS_VM_CHECK_VCPU_TIME || m == VMS_VM_CHECK_VCPU_DELAY) && idx < l->nvcpu)
		return l->check + 3 + (int32_t)(idx * 2 + m - VMS_VM_CHECK_VCPU_TIME);
	return -1;
}

uint8_t vms_vmlay_group(const struct vms_vmlay *l, uint32_t i)
{
	const struct {
		int32_t from, to; /* the group's columns: [from, to) */
		uint8_t group;
	} groups[] = {
		{l->cpu, l->vcpu, VMS_VG_CPU},
		{l->vcpu, l->net, VMS_VG_VCPU},
		{l->net, l->io, VMS_VG_NET},
		{l->io, l->mem, VMS_VG_IO},
		{l->mem, l->balloon, VMS_VG_MEM},
		{l->balloon, l->block, VMS_VG_BALLOON},
		{l->block, l->block + VMS_VM_NBLOCK * l->ndisk, VMS_VG_BLOCK},
		{l->check, l->check >= 0 ? l->slow_t : l->check, VMS_VG_CHECK},
	};
	int32_t c = (int32_t)i;
	for (size_t k = 0; k < VMS_ARRAY_SIZE(groups); k++)
		if (c >= groups[k].from && c < groups[k].to)
			return groups[k].group;
	return 0;
}

/* ---- /proc/net/dev ------------------------------------------------------- */

void vms_nettab_index(struct vms_nettab *t, const char *buf, size_t len)
{
	struct vms_cur c, line;
	t->n = 0;
	t->full = false;
	vms_cur_init(&c, buf, len);
	t->ok = vms_netdev_header(&c, &t->hdr) == 0;
	if (!t->ok)
		return;
	while (vms_cur_line(&c, &line)) {
		vms_cur_skip_blank(&line);
		const char *colon = vms_cur_rfind(&line, ':');
		if (!colon || colon == line.p)
			continue; /* not an interface line: its tap reads as missing */
		if (t->n == t->cap) {
			t->full = true;
			return;
		}
		struct vms_nettab_ent *e = &t->ent[t->n++];
		e->name = line.p;
		e->name_len = (uint32_t)(colon - line.p);
		e->line = line.p;
		e->line_len = (uint32_t)(line.end - line.p);
	}
}

/* ---- opening ---------------------------------------------------------- */

static int open_at(int dirfd, const char *fmt, ...) VMS_PRINTF(2, 3);
static int open_at(int dirfd, const char *fmt, ...)
{
	char p[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(p))
		return -1;
	return openat(dirfd, p, O_RDONLY | O_CLOEXEC);
}

static int open_abs(const char *path)
{
	return path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

static void reset(struct vms_vmk *k)
{
	memset(k, 0, sizeof(*k));
	k->fd_stat = k->fd_io = k->fd_cpu = k->fd_acct_stat = k->fd_mem = k->fd_iostat = -1;
}

int vms_vmk_open(struct vms_vmk *k, const struct vms_vm *vm, int proc_dirfd, const struct vms_cgmounts *m)
{
	reset(k);
	long hz = sysconf(_SC_CLK_TCK), ps = sysconf(_SC_PAGESIZE);
	k->ns_per_tick = hz > 0 ? VMS_NSEC_PER_SEC / (uint64_t)hz : 10000000;
	k->page_size = ps > 0 ? (uint64_t)ps : 4096;
	k->nvcpu = vm->nvcpu;
	k->ntap = vm->ntap;
	if (k->nvcpu) {
		k->fd_sched = malloc(k->nvcpu * sizeof(*k->fd_sched));
		if (!k->fd_sched)
			goto nomem;
		for (unsigned i = 0; i < k->nvcpu; i++)
			k->fd_sched[i] = -1;
	}
	if (k->ntap) {
		k->tap = calloc(k->ntap, sizeof(*k->tap));
		if (!k->tap)
			goto nomem;
		for (unsigned i = 0; i < k->ntap; i++)
			snprintf(k->tap[i].name, sizeof(k->tap[i].name), "%s", vm->tap[i]);
	}
	if (vm->pid <= 0)
		return 0; /* not a local QEMU we can see: the agent serves it */

	k->fd_stat = open_at(proc_dirfd, "%d/stat", (int)vm->pid);
	k->fd_io = open_at(proc_dirfd, "%d/io", (int)vm->pid);
	if (k->fd_stat >= 0)
		k->have |= VMS_VG_MEM;
	if (k->fd_io >= 0)
		k->have |= VMS_VG_IO;
	bool all = k->nvcpu > 0;
	for (unsigned i = 0; i < k->nvcpu; i++) {
		if (vm->vcpu_tid[i] > 0)
			k->fd_sched[i] = open_at(proc_dirfd, "%d/task/%d/schedstat", (int)vm->pid,
						 (int)vm->vcpu_tid[i]);
		if (k->fd_sched[i] < 0)
			all = false;
	}
	if (all)
		k->have |= VMS_VG_VCPU;
	if (k->ntap)
		k->have |= VMS_VG_NET;

	struct vms_procfile cgf = VMS_PROCFILE_INIT;
	char rel[32];
	snprintf(rel, sizeof(rel), "%d/cgroup", (int)vm->pid);
	if (vms_procfile_open(&cgf, proc_dirfd, rel, 1024) == 0) {
		struct vms_cgfiles f;
		int r = vms_cgfiles_find(&f, m, cgf.buf, cgf.len);
		vms_procfile_close(&cgf);
		if (r == -ENOMEM)
			goto nomem;
		if (r == 0) {
			if (f.cpu_stat) {
				k->fd_cpu = open_abs(f.cpu_stat);
			} else if (f.cpuacct_usage) {
				k->fd_cpu = open_abs(f.cpuacct_usage);
				k->fd_acct_stat = open_abs(f.cpuacct_stat);
				k->cpu_v1 = true;
				if (k->fd_acct_stat < 0 && k->fd_cpu >= 0) {
					close(k->fd_cpu);
					k->fd_cpu = -1;
				}
			}
			k->fd_mem = open_abs(f.mem);
			k->fd_iostat = open_abs(f.io_stat);
			vms_cgfiles_free(&f);
		}
	}
	if (k->fd_cpu >= 0)
		k->have |= VMS_VG_CPU;
	return 0;
nomem:
	vms_vmk_close(k);
	return -ENOMEM;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void vms_vmk_close(struct vms_vmk *k)
{
	if (!k)
		return;
	close_fd(&k->fd_stat);
	close_fd(&k->fd_io);
	close_fd(&k->fd_cpu);
	close_fd(&k->fd_acct_stat);
	close_fd(&k->fd_mem);
	close_fd(&k->fd_iostat);
	for (unsigned i = 0; k->fd_sched && i < k->nvcpu; i++)
		close_fd(&k->fd_sched[i]);
	free(k->fd_sched);
	free(k->tap);
	reset(k);
}

/* ---- sampling ---------------------------------------------------------- */

struct rctx {
	char *buf;
	size_t cap;
	bool *gone;
	uint32_t *perr;
};

/* One whole file: 0 with *len, or -errno (a file that fills the scratch
 * buffer is -EFBIG: never a truncated parse). */
static int rd(struct rctx *x, int fd, size_t *len)
{
	if (fd < 0)
		return -EBADF;
	ssize_t n;
	do
		n = pread(fd, x->buf, x->cap, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;
		if (e == ESRCH || e == ENOENT || e == ENODEV)
			*x->gone = true;
		return -e;
	}
	if ((size_t)n >= x->cap)
		return -EFBIG;
	*len = (size_t)n;
	return 0;
}

static bool parsed(struct rctx *x, int r)
{
	if (r < 0)
		(*x->perr)++;
	return r == 0;
}

static bool mul_ok(uint64_t v, uint64_t m, uint64_t *out)
{
	if (v == VMS_NONE || (m && v > (UINT64_MAX - 1) / m))
		return false;
	*out = v * m;
	return true;
}

static bool sample_cpu(struct vms_vmk *k, struct rctx *x, uint64_t *s)
{
	static const char *const v2keys[] = {"usage_usec", "user_usec", "system_usec"};
	static const char *const v1keys[] = {"user", "system"};
	uint64_t v[3];
	size_t len = 0;
	if (rd(x, k->fd_cpu, &len) < 0)
		return false;
	if (!k->cpu_v1) {
		if (!parsed(x, vms_parse_keyed(x->buf, len, v2keys, 3, v)))
			return false;
		bool ok = true;
		for (int i = 0; i < 3; i++)
			if (!mul_ok(v[i], 1000, &s[i])) {
				s[i] = VMS_NONE;
				ok = false;
			}
		return ok;
	}
	uint64_t usage;
	if (!parsed(x, vms_parse_u64_file(x->buf, len, &usage)))
		return false;
	s[0] = usage;
	if (rd(x, k->fd_acct_stat, &len) < 0 || !parsed(x, vms_parse_keyed(x->buf, len, v1keys, 2, v)))
		return false;
	bool ok = true;
	for (int i = 0; i < 2; i++)
		if (!mul_ok(v[i], k->ns_per_tick, &s[1 + i])) {
			s[1 + i] = VMS_NONE;
			ok = false;
		}
	return ok;
}

static const struct vms_nettab_ent *find_tap(const struct vms_nettab *nt, struct vms_vmk_tap *tp)
{
	size_t nl = strlen(tp->name);
	if (tp->hint < nt->n) {
		const struct vms_nettab_ent *e = &nt->ent[tp->hint];
		if (e->name_len == nl && memcmp(e->name, tp->name, nl) == 0)
			return e;
	}
	for (uint32_t i = 0; i < nt->n; i++) {
		const struct vms_nettab_ent *e = &nt->ent[i];
		if (e->name_len == nl && memcmp(e->name, tp->name, nl) == 0) {
			tp->hint = i;
			return e;
		}
	}
	return NULL;
}

static bool sample_tap(const struct vms_nettab *nt, struct vms_vmk_tap *tp, struct rctx *x, uint64_t *s)
{
	/* the guest receives what the host sends into the tap */
	static const uint8_t from[VMS_VM_NET_FIELDS] = {8, 9, 10, 11, 0, 1, 2, 3};
	const struct vms_nettab_ent *e = find_tap(nt, tp);
	if (!e)
		return false;
	struct vms_cur c;
	struct vms_net_line nl;
	vms_cur_init(&c, e->line, e->line_len);
	if (!parsed(x, vms_netdev_next(&c, &nt->hdr, &nl) == 1 ? 0 : -EINVAL))
		return false;
	bool ok = true;
	for (int i = 0; i < VMS_VM_NET_FIELDS; i++) {
		s[i] = nl.v[from[i]];
		if (s[i] == VMS_NONE)
			ok = false;
	}
	return ok;
}

unsigned vms_vmk_sample(struct vms_vmk *k, const struct vms_vmlay *l, uint64_t *slots,
			const struct vms_nettab *nt, char *scratch, size_t cap, bool *gone,
			uint32_t *parse_errors)
{
	struct rctx x = {scratch, cap, gone, parse_errors};
	unsigned ok = 0;
	size_t len = 0;

	if (k->have & VMS_VG_CPU && sample_cpu(k, &x, slots + l->cpu))
		ok |= VMS_VG_CPU;

	if (k->have & VMS_VG_VCPU) {
		bool all = true;
		for (unsigned i = 0; i < k->nvcpu && i < l->nvcpu; i++) {
			struct vms_schedstat ss;
			uint64_t *s = slots + l->vcpu + VMS_VM_VCPU_FIELDS * i;
			if (rd(&x, k->fd_sched[i], &len) < 0 ||
			    !parsed(&x, vms_parse_schedstat(x.buf, len, &ss))) {
				all = false;
				continue;
			}
			s[0] = ss.run_ns;
			s[1] = ss.wait_ns;
			s[2] = ss.slices;
		}
		if (all)
			ok |= VMS_VG_VCPU;
	}

	if (k->have & VMS_VG_NET && nt && nt->ok) {
		bool all = true;
		for (unsigned i = 0; i < k->ntap && i < l->ntap; i++)
			if (!sample_tap(nt, &k->tap[i], &x, slots + l->net + VMS_VM_NET_FIELDS * i))
				all = false;
		if (all)
			ok |= VMS_VG_NET;
	}

	if (k->have & VMS_VG_IO) {
		static const char *const keys[] = {"read_bytes", "write_bytes"};
		uint64_t v[2];
		if (rd(&x, k->fd_io, &len) == 0 && parsed(&x, vms_parse_keyed(x.buf, len, keys, 2, v))) {
			slots[l->io] = v[0];
			slots[l->io + 1] = v[1];
			if (v[0] != VMS_NONE && v[1] != VMS_NONE)
				ok |= VMS_VG_IO;
		}
	}
	if (l->iocg >= 0 && k->fd_iostat >= 0) {
		uint64_t r, w;
		if (rd(&x, k->fd_iostat, &len) == 0 && parsed(&x, vms_parse_iostat(x.buf, len, &r, &w))) {
			slots[l->iocg] = r;
			slots[l->iocg + 1] = w;
		}
	}

	if (k->have & VMS_VG_MEM) {
		struct vms_taskstat ts;
		if (rd(&x, k->fd_stat, &len) == 0 && parsed(&x, vms_parse_taskstat(x.buf, len, &ts)) &&
		    mul_ok(ts.f[24], k->page_size, &slots[l->mem]))
			ok |= VMS_VG_MEM;
	}
	if (k->fd_mem >= 0) {
		uint64_t v;
		if (rd(&x, k->fd_mem, &len) == 0 && parsed(&x, vms_parse_u64_file(x.buf, len, &v)))
			slots[l->mem + 1] = v;
	}
	return ok;
}
