/* SPDX-License-Identifier: MIT */
/* virt_proto.c - encoding and decoding of the agent protocol (see
 * virt_proto.h), shared by the sampler and vmsampler-virt. */
#include "virt_proto.h"
#include "grow.h"
#include "le.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <vmsampler/format.h>

/* ---- metrics ------------------------------------------------------------- */

/* each metric's column: the catalogue's group and field (catalog.c) */

const struct vms_vmetric_info vms_vm_balloon[VMS_VM_NBALLOON] = {
	{VMS_VM_BALLOON_CURRENT, VMS_VG_BALLOON, VMS_G_VMBALLOON, 0, "current"},
	{VMS_VM_BALLOON_MAXIMUM, VMS_VG_BALLOON, VMS_G_VMBALLOON, 1, "maximum"},
	{VMS_VM_BALLOON_SWAP_IN, VMS_VG_BALLOON, VMS_G_VMBALLOON, 2, "swap_in"},
	{VMS_VM_BALLOON_SWAP_OUT, VMS_VG_BALLOON, VMS_G_VMBALLOON, 3, "swap_out"},
	{VMS_VM_BALLOON_MAJOR_FAULT, VMS_VG_BALLOON, VMS_G_VMBALLOON, 4, "major_fault"},
	{VMS_VM_BALLOON_MINOR_FAULT, VMS_VG_BALLOON, VMS_G_VMBALLOON, 5, "minor_fault"},
	{VMS_VM_BALLOON_UNUSED, VMS_VG_BALLOON, VMS_G_VMBALLOON, 6, "unused"},
	{VMS_VM_BALLOON_AVAILABLE, VMS_VG_BALLOON, VMS_G_VMBALLOON, 7, "available"},
	{VMS_VM_BALLOON_USABLE, VMS_VG_BALLOON, VMS_G_VMBALLOON, 8, "usable"},
	/* seconds since the epoch, as libvirt gives it */
	{VMS_VM_BALLOON_LAST_UPDATE, VMS_VG_BALLOON, VMS_G_VMBALLOON, 9, "last-update"},
	{VMS_VM_BALLOON_DISK_CACHES, VMS_VG_BALLOON, VMS_G_VMBALLOON, 10, "disk_caches"},
	{VMS_VM_BALLOON_HUGETLB_PGALLOC, VMS_VG_BALLOON, VMS_G_VMBALLOON, 11, "hugetlb_pgalloc"},
	{VMS_VM_BALLOON_HUGETLB_PGFAIL, VMS_VG_BALLOON, VMS_G_VMBALLOON, 12, "hugetlb_pgfail"},
	{VMS_VM_BALLOON_RSS, VMS_VG_BALLOON, VMS_G_VMBALLOON, 13, "rss"},
};

const struct vms_vmetric_info vms_vm_block[VMS_VM_NBLOCK] = {
	{VMS_VM_BLOCK_RD_REQS, VMS_VG_BLOCK, VMS_G_VMBLOCK, 0, "rd.reqs"},
	{VMS_VM_BLOCK_RD_BYTES, VMS_VG_BLOCK, VMS_G_VMBLOCK, 1, "rd.bytes"},
	{VMS_VM_BLOCK_RD_TIMES, VMS_VG_BLOCK, VMS_G_VMBLOCK, 2, "rd.times"},
	{VMS_VM_BLOCK_WR_REQS, VMS_VG_BLOCK, VMS_G_VMBLOCK, 3, "wr.reqs"},
	{VMS_VM_BLOCK_WR_BYTES, VMS_VG_BLOCK, VMS_G_VMBLOCK, 4, "wr.bytes"},
	{VMS_VM_BLOCK_WR_TIMES, VMS_VG_BLOCK, VMS_G_VMBLOCK, 5, "wr.times"},
	{VMS_VM_BLOCK_FL_REQS, VMS_VG_BLOCK, VMS_G_VMBLOCK, 6, "fl.reqs"},
	{VMS_VM_BLOCK_FL_TIMES, VMS_VG_BLOCK, VMS_G_VMBLOCK, 7, "fl.times"},
	{VMS_VM_BLOCK_ALLOCATION, VMS_VG_BLOCK, VMS_G_VMBLOCK, 8, "allocation"},
	{VMS_VM_BLOCK_CAPACITY, VMS_VG_BLOCK, VMS_G_VMBLOCK, 9, "capacity"},
	{VMS_VM_BLOCK_PHYSICAL, VMS_VG_BLOCK, VMS_G_VMBLOCK, 10, "physical"},
};

const struct vms_vmetric_info vms_vm_mig[VMS_VM_NMIG] = {
	/* virDomainJobType: 2 running, 3 completed, 4 failed, 5 cancelled */
	{VMS_VM_MIG_JOB, 0, VMS_G_VMMIG, 0, NULL},
	{VMS_VM_MIG_TIME_ELAPSED, 0, VMS_G_VMMIG, 1, "time_elapsed"},
	{VMS_VM_MIG_TIME_REMAINING, 0, VMS_G_VMMIG, 2, "time_remaining"},
	{VMS_VM_MIG_SETUP_TIME, 0, VMS_G_VMMIG, 3, "setup_time"},
	{VMS_VM_MIG_DOWNTIME_EXPECTED, 0, VMS_G_VMMIG, 4, "downtime"},
	{VMS_VM_MIG_DOWNTIME, 0, VMS_G_VMMIG, 5, "downtime"},
	{VMS_VM_MIG_DATA_TOTAL, 0, VMS_G_VMMIG, 6, "data_total"},
	{VMS_VM_MIG_DATA_PROCESSED, 0, VMS_G_VMMIG, 7, "data_processed"},
	{VMS_VM_MIG_DATA_REMAINING, 0, VMS_G_VMMIG, 8, "data_remaining"},
	{VMS_VM_MIG_MEMORY_TOTAL, 0, VMS_G_VMMIG, 9, "memory_total"},
	{VMS_VM_MIG_MEMORY_PROCESSED, 0, VMS_G_VMMIG, 10, "memory_processed"},
	{VMS_VM_MIG_MEMORY_REMAINING, 0, VMS_G_VMMIG, 11, "memory_remaining"},
	/* bytes per second, pages per second: no unit of their own */
	{VMS_VM_MIG_MEMORY_BPS, 0, VMS_G_VMMIG, 12, "memory_bps"},
	{VMS_VM_MIG_MEMORY_DIRTY_RATE, 0, VMS_G_VMMIG, 13, "memory_dirty_rate"},
	{VMS_VM_MIG_MEMORY_ITERATION, 0, VMS_G_VMMIG, 14, "memory_iteration"},
	{VMS_VM_MIG_MEMORY_PAGE_SIZE, 0, VMS_G_VMMIG, 15, "memory_page_size"},
	{VMS_VM_MIG_MEMORY_CONSTANT, 0, VMS_G_VMMIG, 16, "memory_constant"},
	{VMS_VM_MIG_MEMORY_NORMAL, 0, VMS_G_VMMIG, 17, "memory_normal"},
	{VMS_VM_MIG_MEMORY_NORMAL_BYTES, 0, VMS_G_VMMIG, 18, "memory_normal_bytes"},
	{VMS_VM_MIG_MEMORY_POSTCOPY_REQS, 0, VMS_G_VMMIG, 19, "memory_postcopy_requests"},
	{VMS_VM_MIG_DISK_TOTAL, 0, VMS_G_VMMIG, 20, "disk_total"},
	{VMS_VM_MIG_DISK_PROCESSED, 0, VMS_G_VMMIG, 21, "disk_processed"},
	{VMS_VM_MIG_DISK_REMAINING, 0, VMS_G_VMMIG, 22, "disk_remaining"},
	{VMS_VM_MIG_DISK_BPS, 0, VMS_G_VMMIG, 23, "disk_bps"},
};

const struct vms_vmetric_info vms_vm_dirty[VMS_VM_NDIRTY] = {
	/* virDomainDirtyRateStatus: 2 measured (the only one sent) */
	{VMS_VM_DIRTY_STATUS, 0, VMS_G_VMDIRTY, 0, "calc_status"},
	/* seconds on QEMU's clock (CLOCK_MONOTONIC: since boot, not the
	 * epoch), seconds, MiB/s: as libvirt gives them */
	{VMS_VM_DIRTY_START_TIME, 0, VMS_G_VMDIRTY, 1, "calc_start_time"},
	{VMS_VM_DIRTY_PERIOD, 0, VMS_G_VMDIRTY, 2, "calc_period"},
	{VMS_VM_DIRTY_MBPS, 0, VMS_G_VMDIRTY, 3, "megabytes_per_second"},
};

static const struct vms_vmetric_info fast[] = {
	{VMS_VM_CPU_TIME, VMS_VG_CPU, VMS_G_VM, 2, "time"},
	{VMS_VM_CPU_USER, VMS_VG_CPU, VMS_G_VM, 3, "user"},
	{VMS_VM_CPU_SYSTEM, VMS_VG_CPU, VMS_G_VM, 4, "system"},
	{VMS_VM_VCPU_TIME, VMS_VG_VCPU, VMS_G_VCPU, 0, "time"},
	{VMS_VM_VCPU_DELAY, VMS_VG_VCPU, VMS_G_VCPU, 1, "delay"},
	{VMS_VM_VCPU_SLICES, VMS_VG_VCPU, VMS_G_VCPU, 2, NULL},
	{VMS_VM_NET_RX_BYTES, VMS_VG_NET, VMS_G_VMNET, 0, "rx.bytes"},
	{VMS_VM_NET_RX_PACKETS, VMS_VG_NET, VMS_G_VMNET, 1, "rx.pkts"},
	{VMS_VM_NET_RX_ERRS, VMS_VG_NET, VMS_G_VMNET, 2, "rx.errs"},
	{VMS_VM_NET_RX_DROP, VMS_VG_NET, VMS_G_VMNET, 3, "rx.drop"},
	{VMS_VM_NET_TX_BYTES, VMS_VG_NET, VMS_G_VMNET, 8, "tx.bytes"},
	{VMS_VM_NET_TX_PACKETS, VMS_VG_NET, VMS_G_VMNET, 9, "tx.pkts"},
	{VMS_VM_NET_TX_ERRS, VMS_VG_NET, VMS_G_VMNET, 10, "tx.errs"},
	{VMS_VM_NET_TX_DROP, VMS_VG_NET, VMS_G_VMNET, 11, "tx.drop"},
	{VMS_VM_IO_READ, VMS_VG_IO, VMS_G_VMIO, 0, NULL},
	{VMS_VM_IO_WRITE, VMS_VG_IO, VMS_G_VMIO, 1, NULL},
	{VMS_VM_IO_CG_READ, VMS_VG_IO, VMS_G_VMIO, 2, NULL},
	{VMS_VM_IO_CG_WRITE, VMS_VG_IO, VMS_G_VMIO, 3, NULL},
	{VMS_VM_MEM_RSS, VMS_VG_MEM, VMS_G_VMMEM, 0, NULL},
	{VMS_VM_MEM_CGROUP, VMS_VG_MEM, VMS_G_VMMEM, 1, NULL},
	{VMS_VM_CHECK_CPU_TIME, VMS_VG_CHECK, VMS_G_VMLV, 0, "time"},
	{VMS_VM_CHECK_CPU_USER, VMS_VG_CHECK, VMS_G_VMLV, 1, "user"},
	{VMS_VM_CHECK_CPU_SYSTEM, VMS_VG_CHECK, VMS_G_VMLV, 2, "system"},
	{VMS_VM_CHECK_VCPU_TIME, VMS_VG_CHECK, VMS_G_VMLVVCPU, 0, "time"},
	{VMS_VM_CHECK_VCPU_DELAY, VMS_VG_CHECK, VMS_G_VMLVVCPU, 1, "delay"},
};


const struct vms_vmetric_info *vms_vmetric_find(unsigned id)
{
	if (id >= VMS_VM_BALLOON_CURRENT && id < VMS_VM_BALLOON_CURRENT + VMS_VM_NBALLOON)
		return &vms_vm_balloon[id - VMS_VM_BALLOON_CURRENT];
	if (id >= VMS_VM_BLOCK_RD_REQS && id < VMS_VM_BLOCK_RD_REQS + VMS_VM_NBLOCK)
		return &vms_vm_block[id - VMS_VM_BLOCK_RD_REQS];
	if (id >= VMS_VM_MIG_JOB && id < VMS_VM_MIG_JOB + VMS_VM_NMIG)
		return &vms_vm_mig[id - VMS_VM_MIG_JOB];
	if (id >= VMS_VM_DIRTY_STATUS && id < VMS_VM_DIRTY_STATUS + VMS_VM_NDIRTY)
		return &vms_vm_dirty[id - VMS_VM_DIRTY_STATUS];
	for (size_t i = 0; i < VMS_ARRAY_SIZE(fast); i++)
		if (fast[i].id == id)
			return &fast[i];
	return NULL;
}

/* ---- writing ------------------------------------------------------------- */

void vms_vp_w_init(struct vms_vp_w *w)
{
	memset(w, 0, sizeof(*w));
}

void vms_vp_w_free(struct vms_vp_w *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

void vms_vp_w_reset(struct vms_vp_w *w)
{
	w->len = w->start = 0;
	w->err = 0;
}

static uint8_t *room(struct vms_vp_w *w, size_t n)
{
	if (w->err)
		return NULL;
	if (w->len - w->start + n > VMS_VP_MAX) {
		w->err = -EMSGSIZE;
		return NULL;
	}
	if (w->len + n > w->cap) {
		uint8_t *b = vms_grow(w->buf, &w->cap, w->len + n, 256);
		if (!b) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->buf = b;
	}
	uint8_t *p = w->buf + w->len;
	w->len += n;
	return p;
}

static void put(struct vms_vp_w *w, uint64_t v, unsigned n)
{
	uint8_t *p = room(w, n);
	if (p)
		vms_le_put(p, v, n);
}

void vms_vp_begin(struct vms_vp_w *w, unsigned type)
{
	if (w->err)
		return;
	w->start = w->len;
	uint8_t *p = room(w, VMS_VP_HDR);
	if (!p)
		return;
	vms_le_put(p, 0, 4);
	p[4] = VMS_VP_VERSION;
	p[5] = (uint8_t)type;
	p[6] = p[7] = 0;
}

void vms_vp_u8(struct vms_vp_w *w, uint8_t v) { put(w, v, 1); }
void vms_vp_u16(struct vms_vp_w *w, uint16_t v) { put(w, v, 2); }
void vms_vp_u32(struct vms_vp_w *w, uint32_t v) { put(w, v, 4); }
void vms_vp_u64(struct vms_vp_w *w, uint64_t v) { put(w, v, 8); }

void vms_vp_str(struct vms_vp_w *w, const char *s, size_t len)
{
	if (len > UINT16_MAX)
		len = UINT16_MAX;
	vms_vp_u16(w, (uint16_t)len);
	uint8_t *p = room(w, len);
	if (p && len)
		memcpy(p, s, len);
}

void vms_vp_cstr(struct vms_vp_w *w, const char *s)
{
	vms_vp_str(w, s ? s : "", s ? strlen(s) : 0);
}

void vms_vp_uuid(struct vms_vp_w *w, const char *uuid)
{
	uint8_t *p = room(w, VMS_VP_UUID_LEN);
	if (p)
		memcpy(p, uuid, VMS_VP_UUID_LEN);
}

int vms_vp_end(struct vms_vp_w *w)
{
	if (w->err) {
		int e = w->err;
		w->len = w->start;
		w->err = 0;
		return e;
	}
	vms_le_put(w->buf + w->start, w->len - w->start, 4);
	w->start = w->len;
	return 0;
}

int vms_vp_w_send(struct vms_vp_w *w, int fd, size_t *pos)
{
	while (*pos < w->len) {
		ssize_t n = send(fd, w->buf + *pos, w->len - *pos, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? -EPIPE : errno == EAGAIN ? -EAGAIN : -errno;
		*pos += (size_t)n;
	}
	vms_vp_w_reset(w);
	*pos = 0;
	return 0;
}

/* ---- reading ------------------------------------------------------------- */

/* A string of at most max bytes, without NUL (and, when name is set,
 * without '/' and blanks: a device name). */
static struct vms_vp_str get_str(struct vms_bytes *r, size_t max, bool dev)
{
	struct vms_vp_str s = {NULL, 0};
	uint16_t n = (uint16_t)vms_bytes_le(r, 2);
	const uint8_t *p = vms_bytes_take(r, n);
	if (!p)
		return s;
	if (n > max || memchr(p, '\0', n)) {
		r->bad = true;
		return s;
	}
	if (dev) {
		if (n == 0) {
			r->bad = true;
			return s;
		}
		for (unsigned i = 0; i < n; i++)
			if (p[i] == '/' || p[i] <= ' ' || p[i] == 0x7f)
				r->bad = true;
	}
	s.p = (const char *)p;
	s.len = n;
	return s;
}

bool vms_vp_uuid_ok(const char *p, size_t len)
{
	if (len != VMS_VP_UUID_LEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = p[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? c != '-' :
			   !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

static void get_uuid(struct vms_bytes *r, char *out)
{
	const uint8_t *p = vms_bytes_take(r, VMS_VP_UUID_LEN);
	out[0] = '\0';
	if (!p)
		return;
	if (!vms_vp_uuid_ok((const char *)p, VMS_VP_UUID_LEN)) {
		r->bad = true;
		return;
	}
	memcpy(out, p, VMS_VP_UUID_LEN);
	out[VMS_VP_UUID_LEN] = '\0';
}

static int rd_done(const struct vms_bytes *r)
{
	return r->bad ? -EBADMSG : 0;
}

int vms_vp_frame(const uint8_t *buf, size_t len, struct vms_vp_msg *m)
{
	if (len < VMS_VP_HDR)
		return 0;
	uint32_t n = vms_le_get32(buf);
	if (n < VMS_VP_HDR || n > VMS_VP_MAX || buf[4] != VMS_VP_VERSION || buf[6] || buf[7])
		return -EBADMSG;
	if (len < n)
		return 0;
	m->type = buf[5];
	m->pl = buf + VMS_VP_HDR;
	m->plen = n - VMS_VP_HDR;
	return (int)n;
}

int vms_vp_hello_dec(const struct vms_vp_msg *m, struct vms_vp_hello *o)
{
	struct vms_bytes r = vms_bytes_of(m->pl, m->plen);
	o->version = (uint32_t)vms_bytes_le(&r, 4);
	o->pid = (uint32_t)vms_bytes_le(&r, 4);
	o->libvirt_version = vms_bytes_le(&r, 8);
	o->uri = get_str(&r, VMS_VP_NAME_MAX, false);
	return rd_done(&r);
}

int vms_vp_conn_dec(const struct vms_vp_msg *m, struct vms_vp_conn *o)
{
	struct vms_bytes r = vms_bytes_of(m->pl, m->plen);
	o->up = (uint8_t)vms_bytes_le(&r, 1);
	o->first = (uint8_t)vms_bytes_le(&r, 1);
	o->driver = get_str(&r, VMS_VP_NAME_MAX, false);
	o->msg = get_str(&r, VMS_VP_NAME_MAX, false);
	o->hv_version = !r.bad && r.end - r.p >= 8 ? vms_bytes_le(&r, 8) : 0;
	if (o->up > 1 || o->first > 1)
		r.bad = true;
	return rd_done(&r);
}

/* A list of n device names; returns where it starts. */
static const uint8_t *get_list(struct vms_bytes *r, unsigned n)
{
	const uint8_t *s = r->p;
	for (unsigned i = 0; i < n && !r->bad; i++)
		get_str(r, VMS_VP_DEV_MAX, true);
	return s;
}

int vms_vp_dom_dec(const struct vms_vp_msg *m, struct vms_vp_dom *o)
{
	struct vms_bytes r = vms_bytes_of(m->pl, m->plen);
	get_uuid(&r, o->uuid);
	o->name = get_str(&r, VMS_VP_NAME_MAX, false);
	o->id = (uint32_t)vms_bytes_le(&r, 4);
	o->state = (uint8_t)vms_bytes_le(&r, 1);
	o->reason = (uint8_t)vms_bytes_le(&r, 1);
	o->pid = (uint32_t)vms_bytes_le(&r, 4);
	o->flags = (uint8_t)vms_bytes_le(&r, 1);
	o->fallback = (uint8_t)vms_bytes_le(&r, 1);
	o->nvcpu = (uint16_t)vms_bytes_le(&r, 2);
	o->tids = vms_bytes_take(&r, (size_t)o->nvcpu * 4);
	o->ntap = (uint16_t)vms_bytes_le(&r, 2);
	o->taps = get_list(&r, o->ntap);
	o->ndisk = (uint16_t)vms_bytes_le(&r, 2);
	o->disks = get_list(&r, o->ndisk);
	if (!r.bad && (o->name.len == 0 || o->pid > INT32_MAX))
		r.bad = true;
	for (unsigned i = 0; !r.bad && i < o->nvcpu; i++)
		if (vms_vp_dom_tid(o, i) > INT32_MAX)
			r.bad = true;
	return rd_done(&r);
}

int vms_vp_event_dec(const struct vms_vp_msg *m, struct vms_vp_event *o)
{
	struct vms_bytes r = vms_bytes_of(m->pl, m->plen);
	o->type = (uint16_t)vms_bytes_le(&r, 2);
	get_uuid(&r, o->uuid);
	o->name = get_str(&r, VMS_VP_NAME_MAX, false);
	o->detail = get_str(&r, VMS_VP_NAME_MAX, false);
	if (!r.bad && (o->type < VMS_EV_VM_STARTED || o->type > VMS_EV_VM_UNDEFINED))
		r.bad = true;
	return rd_done(&r);
}

int vms_vp_uuids_dec(const struct vms_vp_msg *m, struct vms_vp_uuids *o)
{
	struct vms_bytes r = vms_bytes_of(m->pl, m->plen);
	o->id = (uint32_t)vms_bytes_le(&r, 4);
	o->n = (uint16_t)vms_bytes_le(&r, 2);
	if (o->n > VMS_VP_BATCH_MAX)
		r.bad = true;
	o->uuids = vms_bytes_take(&r, (size_t)o->n * VMS_VP_UUID_LEN);
	for (unsigned i = 0; !r.bad && i < o->n; i++)
		if (!vms_vp_uuid_ok((const char *)o->uuids + (size_t)i * VMS_VP_UUID_LEN, VMS_VP_UUID_LEN))
			r.bad = true;
	return rd_done(&r);
}

int vms_vp_stats_dec(const struct vms_vp_msg *m, struct vms_vp_stats *o)
{
	struct vms_bytes r = vms_bytes_of(m->pl, m->plen);
	get_uuid(&r, o->uuid);
	o->t_real_ns = (int64_t)vms_bytes_le(&r, 8);
	o->slow = (uint8_t)vms_bytes_le(&r, 1);
	o->n = (uint16_t)vms_bytes_le(&r, 2);
	o->ent = vms_bytes_take(&r, (size_t)o->n * 12);
	if (o->slow > 1)
		r.bad = true;
	for (unsigned i = 0; !r.bad && i < o->n; i++) {
		uint16_t id, idx;
		uint64_t v;
		vms_vp_stats_get(o, i, &id, &idx, &v);
		if (!vms_vmetric_find(id) || v == VMS_NONE)
			r.bad = true;
	}
	return rd_done(&r);
}

int vms_vp_num_dec(const struct vms_vp_msg *m, struct vms_vp_num *o)
{
	struct vms_bytes r = vms_bytes_of(m->pl, m->plen);
	memset(o, 0, sizeof(*o));
	switch (m->type) {
	case VMS_VP_GONE:
		get_uuid(&r, o->uuid);
		break;
	case VMS_VP_SYNC:
		o->a = vms_bytes_le(&r, 4);
		o->c = (uint32_t)vms_bytes_le(&r, 1);
		if (o->c > 1)
			r.bad = true;
		break;
	case VMS_VP_BATCH_DONE:
		o->a = vms_bytes_le(&r, 4);
		o->c = (uint32_t)vms_bytes_le(&r, 2);
		o->b = vms_bytes_le(&r, 8);
		break;
	case VMS_VP_ACK:
	case VMS_VP_NEXT:
		o->a = vms_bytes_le(&r, 8);
		break;
	case VMS_VP_TICK:
		o->a = vms_bytes_le(&r, 8);
		o->b = vms_bytes_le(&r, 8);
		break;
	case VMS_VP_NEED:
		get_uuid(&r, o->uuid);
		o->b = vms_bytes_le(&r, 1);
		break;
	default:
		r.bad = true;
	}
	return rd_done(&r);
}

uint32_t vms_vp_dom_tid(const struct vms_vp_dom *d, unsigned i)
{
	return vms_le_get32(d->tids + (size_t)i * 4);
}

struct vms_vp_str vms_vp_list_str(const uint8_t *p, unsigned i)
{
	for (;;) {
		uint16_t n = vms_le_get16(p);
		if (i-- == 0)
			return (struct vms_vp_str){(const char *)p + 2, n};
		p += 2 + n;
	}
}

void vms_vp_uuids_get(const struct vms_vp_uuids *u, unsigned i, char *out)
{
	memcpy(out, u->uuids + (size_t)i * VMS_VP_UUID_LEN, VMS_VP_UUID_LEN);
	out[VMS_VP_UUID_LEN] = '\0';
}

void vms_vp_stats_get(const struct vms_vp_stats *s, unsigned i, uint16_t *metric, uint16_t *index,
		      uint64_t *value)
{
	const uint8_t *p = s->ent + (size_t)i * 12;
	*metric = vms_le_get16(p);
	*index = vms_le_get16(p + 2);
	*value = vms_le_get64(p + 4);
}
