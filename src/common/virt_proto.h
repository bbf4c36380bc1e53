/* SPDX-License-Identifier: MIT */
/* virt_proto.h - the messages between the sampler's vm source and its
 * libvirt agent, vmsampler-virt (protocol version 1).
 *
 * The two processes talk over a socketpair (SOCK_STREAM).  A message is
 *
 *   u32 len      the whole message, header included (8 .. VMS_VP_MAX)
 *   u8  version  VMS_VP_VERSION
 *   u8  type     enum vms_vp_type
 *   u16 zero
 *   payload      len - 8 bytes
 *
 * All integers are little-endian.  A string is u16 length + bytes (no
 * NUL); a UUID is 36 bytes of lower- or upper-case hex and dashes, without
 * a length.  A reader ignores payload bytes after the fields it knows (a
 * later minor revision may append fields) and refuses a message whose
 * version differs, whose length is out of range, or whose fields do not
 * decode: the stream is then broken and the sampler restarts the agent.
 *
 * Agent -> sampler:
 *   HELLO       u32 version, u32 agent pid, u64 libvirt version, str uri
 *   CONN        u8 up, u8 first (the first failure since the agent
 *               started), str driver (virConnectGetType), str message,
 *               u64 hypervisor version (virConnectGetVersion; 0 unknown;
 *               appended: an older agent's CONN decodes with 0)
 *   DOM         uuid, str name, u32 id, u8 state, u8 reason, u32 pid,
 *               u8 flags (VMS_VP_DOM_*), u8 fallback (groups the agent
 *               serves through libvirt every tick), u16 nvcpu + u32 tid
 *               each (index = vCPU number, 0 = unknown), u16 ntap + str
 *               each (host-side tap names), u16 ndisk + str each (guest
 *               disk targets)
 *   GONE        uuid                      (not running any more)
 *   EVENT       u16 type (VMS_EV_VM_*), uuid, str name, str detail
 *   SYNC        u32 ndomains, u8 end      (end 0: a full listing begins;
 *                                          end 1: it ended, and domains not
 *                                          announced since it began are
 *                                          gone)
 *   BATCH       u32 id, u16 n, n x uuid   (about to ask libvirt about these)
 *   STATS       uuid, i64 t_real_ns (when libvirt returned them), u8 slow
 *               (1: slow path, 0: fallback fast path), u16 n, n x
 *               {u16 metric (enum vms_vmetric), u16 index, u64 value}
 *   BATCH_DONE  u32 id, u16 failed, u64 wall_ns
 *   ACK         u64 tick
 *   NEXT        u64 delay_ns          (the agent has no work for a TICK for
 *                                      this long from now: the sampler may
 *                                      leave TICKs out until then, but for
 *                                      its watchdog's; 0: every tick.  Sent
 *                                      after each TICK's work and whenever
 *                                      work comes sooner, e.g. a new domain)
 * Sampler -> agent:
 *   TICK        u64 tick, i64 t_real_ns
 *   BACKOFF     u32 ms, u16 n, n x uuid   (a stuck batch: leave these alone)
 *   NEED        uuid, u8 groups           (the kernel cannot serve these)
 *
 * Encoding never fails except for memory (the writer grows its buffer);
 * decoding allocates nothing: strings and arrays are views into the
 * message. */
#ifndef VMS_VIRT_PROTO_H
#define VMS_VIRT_PROTO_H

#include "catalog.h"
#include "vms.h"

#define VMS_VP_VERSION 1
#define VMS_VP_HDR 8
#define VMS_VP_MAX (256u << 10)
#define VMS_VP_UUID_LEN 36
#define VMS_VP_NAME_MAX 1024  /* domain names, messages */
#define VMS_VP_DEV_MAX 64     /* tap and disk names */
#define VMS_VP_BATCH_MAX 256  /* uuids in one BATCH or BACKOFF */
/* the longest delay a NEXT says or is taken to say (the sampler's watchdog
 * ticks come anyway) */
#define VMS_VP_NEXT_MAX (3600 * VMS_NSEC_PER_SEC)

enum vms_vp_type {
	VMS_VP_HELLO = 1,
	VMS_VP_CONN = 2,
	VMS_VP_DOM = 3,
	VMS_VP_GONE = 4,
	VMS_VP_EVENT = 5,
	VMS_VP_SYNC = 6,
	VMS_VP_BATCH = 7,
	VMS_VP_STATS = 8,
	VMS_VP_BATCH_DONE = 9,
	VMS_VP_ACK = 10,
	VMS_VP_NEXT = 11,
	VMS_VP_TICK = 32,
	VMS_VP_BACKOFF = 33,
	VMS_VP_NEED = 34,
};

/* DOM flags */
#define VMS_VP_DOM_LOCAL 0x01u /* pid verified (/proc/PID/cmdline has -uuid UUID) */

/* Groups of per-VM values (also the bits of the vm.<name>.path column:
 * kernel groups in bits 0-7, libvirt groups in bits 8-15). */
enum vms_vgroup {
	VMS_VG_CPU = 0x01,
	VMS_VG_VCPU = 0x02,
	VMS_VG_NET = 0x04,
	VMS_VG_IO = 0x08,
	VMS_VG_MEM = 0x10,
	VMS_VG_BALLOON = 0x20,
	VMS_VG_BLOCK = 0x40,
	VMS_VG_CHECK = 0x80, /* crosscheck copies of libvirt's cpu and vcpu values */
};

/* Per-VM values.  index: the vCPU number, the tap or disk position in the
 * DOM message, 0 otherwise. */
enum vms_vmetric {
	VMS_VM_CPU_TIME = 1,
	VMS_VM_CPU_USER,
	VMS_VM_CPU_SYSTEM,
	VMS_VM_VCPU_TIME,
	VMS_VM_VCPU_DELAY,
	VMS_VM_VCPU_SLICES,
	VMS_VM_NET_RX_BYTES, /* the guest's view: what the guest received */
	VMS_VM_NET_RX_PACKETS,
	VMS_VM_NET_RX_ERRS,
	VMS_VM_NET_RX_DROP,
	VMS_VM_NET_TX_BYTES,
	VMS_VM_NET_TX_PACKETS,
	VMS_VM_NET_TX_ERRS,
	VMS_VM_NET_TX_DROP,
	VMS_VM_IO_READ,
	VMS_VM_IO_WRITE,
	VMS_VM_IO_CG_READ,
	VMS_VM_IO_CG_WRITE,
	VMS_VM_MEM_RSS,
	VMS_VM_MEM_CGROUP,
	/* balloon.* in libvirt's units */
	VMS_VM_BALLOON_CURRENT = 32,
	VMS_VM_BALLOON_MAXIMUM,
	VMS_VM_BALLOON_SWAP_IN,
	VMS_VM_BALLOON_SWAP_OUT,
	VMS_VM_BALLOON_MAJOR_FAULT,
	VMS_VM_BALLOON_MINOR_FAULT,
	VMS_VM_BALLOON_UNUSED,
	VMS_VM_BALLOON_AVAILABLE,
	VMS_VM_BALLOON_USABLE,
	VMS_VM_BALLOON_LAST_UPDATE,
	VMS_VM_BALLOON_DISK_CACHES,
	VMS_VM_BALLOON_HUGETLB_PGALLOC,
	VMS_VM_BALLOON_HUGETLB_PGFAIL,
	VMS_VM_BALLOON_RSS,
	/* block.<dev>.* in libvirt's units */
	VMS_VM_BLOCK_RD_REQS = 64,
	VMS_VM_BLOCK_RD_BYTES,
	VMS_VM_BLOCK_RD_TIMES,
	VMS_VM_BLOCK_WR_REQS,
	VMS_VM_BLOCK_WR_BYTES,
	VMS_VM_BLOCK_WR_TIMES,
	VMS_VM_BLOCK_FL_REQS,
	VMS_VM_BLOCK_FL_TIMES,
	VMS_VM_BLOCK_ALLOCATION,
	VMS_VM_BLOCK_CAPACITY,
	VMS_VM_BLOCK_PHYSICAL,
	/* libvirt's own cpu and vcpu values (crosscheck) */
	VMS_VM_CHECK_CPU_TIME = 96,
	VMS_VM_CHECK_CPU_USER,
	VMS_VM_CHECK_CPU_SYSTEM,
	VMS_VM_CHECK_VCPU_TIME,
	VMS_VM_CHECK_VCPU_DELAY,
	/* migration.*: the job statistics of a domain that has a migration
	 * job (virDomainGetJobStats; the final ones from the job-completed
	 * event), in libvirt's units; see vms_vm_mig */
	VMS_VM_MIG_JOB = 128,
	VMS_VM_MIG_TIME_ELAPSED,
	VMS_VM_MIG_TIME_REMAINING,
	VMS_VM_MIG_SETUP_TIME,
	VMS_VM_MIG_DOWNTIME_EXPECTED,
	VMS_VM_MIG_DOWNTIME,
	VMS_VM_MIG_DATA_TOTAL,
	VMS_VM_MIG_DATA_PROCESSED,
	VMS_VM_MIG_DATA_REMAINING,
	VMS_VM_MIG_MEMORY_TOTAL,
	VMS_VM_MIG_MEMORY_PROCESSED,
	VMS_VM_MIG_MEMORY_REMAINING,
	VMS_VM_MIG_MEMORY_BPS,
	VMS_VM_MIG_MEMORY_DIRTY_RATE,
	VMS_VM_MIG_MEMORY_ITERATION,
	VMS_VM_MIG_MEMORY_PAGE_SIZE,
	VMS_VM_MIG_MEMORY_CONSTANT,
	VMS_VM_MIG_MEMORY_NORMAL,
	VMS_VM_MIG_MEMORY_NORMAL_BYTES,
	VMS_VM_MIG_MEMORY_POSTCOPY_REQS,
	VMS_VM_MIG_DISK_TOTAL,
	VMS_VM_MIG_DISK_PROCESSED,
	VMS_VM_MIG_DISK_REMAINING,
	VMS_VM_MIG_DISK_BPS,
	/* dirtyrate.*: the result of a dirty-page-rate calculation the agent
	 * started (sources.libvirt.dirty_rate_every), from the dirtyrate
	 * stats group, in libvirt's units; see vms_vm_dirty */
	VMS_VM_DIRTY_STATUS = 160,
	VMS_VM_DIRTY_START_TIME,
	VMS_VM_DIRTY_PERIOD,
	VMS_VM_DIRTY_MBPS,
};

/* What the sampler needs to know about a metric: its column is the
 * catalogue's field `field` of group `cat` (catalog.h), which says its
 * name, kind and unit. */
struct vms_vmetric_info {
	uint16_t id;
	uint8_t group;     /* enum vms_vgroup */
	uint8_t cat;       /* enum vms_group */
	uint8_t field;     /* index in the group's catalogue fields */
	const char *lv;    /* libvirt's bulk-stats name (after "balloon." or
			    * "block.N."), NULL if none */
};

/* The catalogue's entry of a metric. */
static inline const struct vms_catfield *vms_vmetric_field(const struct vms_vmetric_info *m)
{
	return &vms_catalog[m->cat].fields[m->field];
}

/* The balloon and block fields, in column order. */
#define VMS_VM_NBALLOON 14
#define VMS_VM_NBLOCK 11
extern const struct vms_vmetric_info vms_vm_balloon[VMS_VM_NBALLOON];
extern const struct vms_vmetric_info vms_vm_block[VMS_VM_NBLOCK];
/* The migration.* fields, in column order (ids VMS_VM_MIG_JOB on); lv is
 * the typed parameter's name in virDomainGetJobStats ("downtime" twice:
 * the expected downtime of a running job, the real one of a completed
 * job), NULL for the job type itself. */
#define VMS_VM_NMIG 24
extern const struct vms_vmetric_info vms_vm_mig[VMS_VM_NMIG];
/* The dirtyrate.* fields, in column order (ids VMS_VM_DIRTY_STATUS on);
 * lv is the name after "dirtyrate." in the stats group. */
#define VMS_VM_NDIRTY 4
extern const struct vms_vmetric_info vms_vm_dirty[VMS_VM_NDIRTY];
/* Any metric's info, or NULL for an unknown id. */
const struct vms_vmetric_info *vms_vmetric_find(unsigned id);

/* ---- writing ------------------------------------------------------------ */

struct vms_vp_w {
	uint8_t *buf;
	size_t len, cap;
	size_t start; /* of the message being written */
	int err;      /* sticky -ENOMEM / -EMSGSIZE */
};

void vms_vp_w_init(struct vms_vp_w *w);
void vms_vp_w_free(struct vms_vp_w *w);
/* Forget what was written (keeps the buffer). */
void vms_vp_w_reset(struct vms_vp_w *w);
void vms_vp_begin(struct vms_vp_w *w, unsigned type);
void vms_vp_u8(struct vms_vp_w *w, uint8_t v);
void vms_vp_u16(struct vms_vp_w *w, uint16_t v);
void vms_vp_u32(struct vms_vp_w *w, uint32_t v);
void vms_vp_u64(struct vms_vp_w *w, uint64_t v);
void vms_vp_str(struct vms_vp_w *w, const char *s, size_t len);
void vms_vp_cstr(struct vms_vp_w *w, const char *s);
void vms_vp_uuid(struct vms_vp_w *w, const char *uuid);
/* Close the message: its length goes into the header.  0 or the sticky
 * error (then the message is dropped from the buffer). */
int vms_vp_end(struct vms_vp_w *w);
/* Send w's bytes from *pos on the socket fd (never blocking, no SIGPIPE):
 * 0 when all are sent (w is emptied, *pos 0), -EAGAIN when the socket is
 * full (*pos says how far it got), or -EPIPE / -errno when the peer is
 * gone. */
int vms_vp_w_send(struct vms_vp_w *w, int fd, size_t *pos);

/* ---- reading ------------------------------------------------------------ */

struct vms_vp_str {
	const char *p;
	uint16_t len;
};

struct vms_vp_msg {
	uint8_t type;
	const uint8_t *pl; /* payload */
	size_t plen;
};

/* The message at the start of buf[0..len): returns its total length (> 0)
 * with *m set, 0 if more bytes are needed, -EBADMSG if the stream is
 * broken (bad length or version). */
int vms_vp_frame(const uint8_t *buf, size_t len, struct vms_vp_msg *m);

struct vms_vp_hello {
	uint32_t version, pid;
	uint64_t libvirt_version;
	struct vms_vp_str uri;
};
struct vms_vp_conn {
	uint8_t up, first;
	struct vms_vp_str driver, msg;
	uint64_t hv_version;
};
struct vms_vp_dom {
	char uuid[VMS_VP_UUID_LEN + 1];
	struct vms_vp_str name;
	uint32_t id, pid;
	uint8_t state, reason, flags, fallback;
	uint16_t nvcpu, ntap, ndisk;
	const uint8_t *tids;  /* nvcpu x u32 */
	const uint8_t *taps;  /* ntap strings */
	const uint8_t *disks; /* ndisk strings */
};
struct vms_vp_event {
	uint16_t type;
	char uuid[VMS_VP_UUID_LEN + 1];
	struct vms_vp_str name, detail;
};
struct vms_vp_uuids { /* BATCH, BACKOFF */
	uint32_t id;          /* BATCH: id; BACKOFF: ms */
	uint16_t n;
	const uint8_t *uuids; /* n x 36 bytes */
};
struct vms_vp_stats {
	char uuid[VMS_VP_UUID_LEN + 1];
	int64_t t_real_ns;
	uint8_t slow;
	uint16_t n;
	const uint8_t *ent;   /* n x 12 bytes */
};
struct vms_vp_num { /* SYNC, BATCH_DONE, ACK, NEXT, TICK, NEED */
	uint64_t a;           /* SYNC: n; BATCH_DONE: id; ACK, TICK: tick; NEXT: delay_ns */
	uint64_t b;           /* BATCH_DONE: wall_ns; TICK: t_real_ns; NEED: groups */
	uint32_t c;           /* BATCH_DONE: failed; SYNC: end */
	char uuid[VMS_VP_UUID_LEN + 1]; /* NEED, GONE */
};

/* Decode a payload of the given type.  0 or -EBADMSG. */
int vms_vp_hello_dec(const struct vms_vp_msg *m, struct vms_vp_hello *o);
int vms_vp_conn_dec(const struct vms_vp_msg *m, struct vms_vp_conn *o);
int vms_vp_dom_dec(const struct vms_vp_msg *m, struct vms_vp_dom *o);
int vms_vp_event_dec(const struct vms_vp_msg *m, struct vms_vp_event *o);
int vms_vp_uuids_dec(const struct vms_vp_msg *m, struct vms_vp_uuids *o);
int vms_vp_stats_dec(const struct vms_vp_msg *m, struct vms_vp_stats *o);
/* GONE, SYNC, BATCH_DONE, ACK, NEXT, TICK, NEED */
int vms_vp_num_dec(const struct vms_vp_msg *m, struct vms_vp_num *o);

/* Array members of a decoded message (i < the count; the decoder checked
 * them all). */
uint32_t vms_vp_dom_tid(const struct vms_vp_dom *d, unsigned i);
/* The i-th string of a list that starts at p (taps, disks). */
struct vms_vp_str vms_vp_list_str(const uint8_t *p, unsigned i);
/* uuid i of a BATCH/BACKOFF into out[37]. */
void vms_vp_uuids_get(const struct vms_vp_uuids *u, unsigned i, char *out);
void vms_vp_stats_get(const struct vms_vp_stats *s, unsigned i, uint16_t *metric, uint16_t *index,
		      uint64_t *value);

/* A syntactically valid UUID (36 chars, dashes at 8, 13, 18, 23, hex
 * elsewhere). */
bool vms_vp_uuid_ok(const char *p, size_t len);

#endif
