/* SPDX-License-Identifier: MIT */
/* parse.h - strict parsers for the /proc files the host sources read.
 *
 * Plain functions over (buf, len): no allocation, no I/O, no logging, so
 * the tick, the unit tests and the fuzzers call the very same code.
 * Line iterators return 1 (a line was parsed into *out), 0 (end of
 * buffer) or -EINVAL/-ERANGE (this line is malformed: it was skipped, the
 * cursor is at the next line, *out is unspecified — the caller counts it
 * and goes on). */
#ifndef VMS_PARSE_H
#define VMS_PARSE_H

#include "cursor.h"

/* ---- /proc/loadavg: "0.21 0.37 0.39 1/719 19737" ---------------------- */
struct vms_loadavg {
	uint64_t load[3]; /* 1, 5, 15 minutes, x100 ("0.21" -> 21) */
	uint64_t running; /* runnable tasks */
	uint64_t total;   /* tasks */
	uint64_t last_pid;
};
int vms_parse_loadavg(const char *buf, size_t len, struct vms_loadavg *out);

/* ---- /proc/stat --------------------------------------------------------- */
#define VMS_STAT_CPU_FIELDS 10 /* user nice system idle iowait irq softirq steal guest guest_nice */
enum vms_stat_key {
	VMS_STAT_OTHER = 0,  /* a line we do not use (btime, page, swap, ...) */
	VMS_STAT_CPU_ALL,    /* "cpu " */
	VMS_STAT_CPU,        /* "cpuN" */
	VMS_STAT_CTXT,
	VMS_STAT_PROCESSES,
	VMS_STAT_PROCS_RUNNING,
	VMS_STAT_PROCS_BLOCKED,
	VMS_STAT_INTR,       /* first number only */
	VMS_STAT_SOFTIRQ,    /* first number only */
};
struct vms_stat_line {
	enum vms_stat_key key;
	uint32_t cpu;        /* VMS_STAT_CPU: N */
	unsigned nfields;    /* CPU lines: fields present (4..10; more are ignored) */
	uint64_t v[VMS_STAT_CPU_FIELDS]; /* CPU lines: the fields; others: v[0] */
};
extern const char *const vms_stat_cpu_field_names[VMS_STAT_CPU_FIELDS];
/* The N of "cpuN" (n bytes at d): decimal without leading zeros, fitting
 * in 32 bits.  0, -EINVAL or -ERANGE (/proc/stat, /proc/schedstat). */
int vms_cpu_number(const char *d, size_t n, uint32_t *cpu);
int vms_stat_next(struct vms_cur *c, struct vms_stat_line *out);

/* ---- /proc/diskstats ---------------------------------------------------- */
#define VMS_DISK_FIELDS 17
/* rd_ios rd_merges rd_sectors rd_ticks wr_ios wr_merges wr_sectors wr_ticks
 * in_flight io_ticks time_in_queue dc_ios dc_merges dc_sectors dc_ticks
 * fl_ios fl_ticks; old 2.6 partition lines have 4 fields:
 * rd_ios rd_sectors wr_ios wr_sectors (stored at their 11-field positions,
 * nfields = 4). */
struct vms_disk_line {
	uint32_t major, minor;
	const char *name;    /* points into the buffer, not NUL-terminated */
	size_t name_len;
	unsigned nfields;    /* 4, 11, 15 or 17 (other counts are malformed) */
	uint64_t v[VMS_DISK_FIELDS];
};
extern const char *const vms_disk_field_names[VMS_DISK_FIELDS];
int vms_diskstats_next(struct vms_cur *c, struct vms_disk_line *out);

/* ---- /proc/net/dev ------------------------------------------------------ */
#define VMS_NET_FIELDS 16
/* rx_bytes rx_packets rx_errs rx_drop rx_fifo rx_frame rx_compressed
 * rx_multicast tx_bytes tx_packets tx_errs tx_drop tx_fifo tx_colls
 * tx_carrier tx_compressed — in this order whatever the header says. */
extern const char *const vms_net_field_names[VMS_NET_FIELDS];
/* Column map built from the two header lines: map[i] = our field index of
 * the file's i-th number (-1: a column we do not know, skipped). */
struct vms_netdev_hdr {
	unsigned ncols;
	int8_t map[32];
};
/* Parse the two header lines at the cursor (advances past them). */
int vms_netdev_header(struct vms_cur *c, struct vms_netdev_hdr *h);
struct vms_net_line {
	const char *name;    /* into the buffer; may contain ':' ("ibr10:30") */
	size_t name_len;
	uint64_t v[VMS_NET_FIELDS];
};
int vms_netdev_next(struct vms_cur *c, const struct vms_netdev_hdr *h, struct vms_net_line *out);

/* ---- memory (parse_mem.c) ---------------------------------------------- */

/* A "key value" line of /proc/meminfo or /proc/vmstat: the key is a view
 * into the buffer (at most VMS_KV_KEY_MAX bytes of [A-Za-z0-9_], and in
 * meminfo '(' ')'); kb: meminfo's unit was "kB" and v is in bytes
 * (the number times 1024); else v is the number. */
#define VMS_KV_KEY_MAX 64
struct vms_kv_line {
	const char *key;
	size_t key_len;
	uint64_t v;
	bool kb;
};
int vms_meminfo_next(struct vms_cur *c, struct vms_kv_line *out);
int vms_vmstat_next(struct vms_cur *c, struct vms_kv_line *out);

/* /proc/pressure/{cpu,memory,io,irq}: "some avg10=0.12 avg60=0.03
 * avg300=0.00 total=123456" and the same with "full"; avg x 100 (percent
 * with two decimals), total in microseconds. */
struct vms_psi_line {
	bool full;
	uint64_t avg[3];
	uint64_t total;
};
int vms_psi_next(struct vms_cur *c, struct vms_psi_line *out);

/* ---- /proc/interrupts and /proc/softirqs (parse_irq.c) ------------------ */

/* The header line, "CPU0 CPU1 CPU3": cpu[i] = the CPU of the i-th column
 * (online CPUs only, in increasing order), *ncpu columns.  1, -EINVAL (not
 * a header), -E2BIG (more than cap columns), -ENODATA (no line). */
int vms_irq_header(struct vms_cur *c, uint32_t *cpu, unsigned cap, unsigned *ncpu);
/* A vector's line, "NAME: n n n [description]" (the line iterator
 * convention above): the name (blanks before it dropped, at most
 * VMS_IRQ_NAME_MAX bytes of [A-Za-z0-9_]) and its counts, v[0..n) with
 * 1 <= n <= ncpu: n == ncpu on a per-CPU line, fewer on a line that is
 * not per CPU (x86's ERR and MIS: one number).  Counts end at ncpu or at
 * the first token that is not all digits (the description). */
#define VMS_IRQ_NAME_MAX 32
struct vms_irq_line {
	const char *name;    /* into the buffer */
	size_t name_len;
	unsigned n;
};
int vms_irq_next(struct vms_cur *c, uint64_t *v, unsigned ncpu, struct vms_irq_line *out);

/* ---- /proc/schedstat (parse_schedstat.c) ------------------------------- */

/* Documentation/scheduler/sched-stats.rst: "version N", "timestamp J",
 * then per online CPU "cpuN f1 .. f9" followed by its "domainK ..."
 * lines.  Versions 15, 16 and 17 have the same cpu line (16 and 17
 * changed the domain lines); of it, f7 is the time the CPU ran tasks (ns), f8 the
 * time tasks waited on its run queue (ns), f9 the timeslices it ran.
 * vms_schedstat_version reads the first line: 1 and *version for a
 * version whose cpu lines are these, -EPROTONOSUPPORT (and *version) for
 * another version, -EINVAL not a version line, -ENODATA an empty file.
 * vms_schedstat_next (the line iterator convention above) returns the
 * cpu lines and passes over the timestamp and domain lines; any other
 * line, a cpu line with a bad number or not exactly 9 numbers is
 * -EINVAL (-ERANGE on overflow). */
#define VMS_SCHEDSTAT_VERSION_MIN 15u
#define VMS_SCHEDSTAT_VERSION_MAX 17u
struct vms_schedstat_cpu {
	uint32_t cpu;
	uint64_t run_ns, wait_ns, slices;
};
int vms_schedstat_version(struct vms_cur *c, unsigned *version);
int vms_schedstat_next(struct vms_cur *c, struct vms_schedstat_cpu *out);

/* ---- per-VM files (parse_vm.c) ----------------------------------------- */

/* /proc/<pid>/stat and /proc/<pid>/task/<tid>/stat: "pid (comm) S f4 f5
 * ...".  comm is everything between the first '(' and the LAST ')' of the
 * first line (it may hold blanks and parentheses); later lines are
 * ignored.  Fields are numbered as in proc(5) (f[1] pid, f[3] state as
 * its character, f[14] utime, f[15] stime, f[24] rss in pages); negative
 * fields are stored as two's complement.  At least 24 fields (rss) are
 * required; fields past VMS_TASKSTAT_MAX are counted and ignored. */
#define VMS_TASKSTAT_MAX 52
struct vms_taskstat {
	const char *comm;    /* into the buffer */
	size_t comm_len;
	char state;
	unsigned nfields;    /* fields on the line, pid being field 1 */
	uint64_t f[VMS_TASKSTAT_MAX + 1];
};
int vms_parse_taskstat(const char *buf, size_t len, struct vms_taskstat *out);

/* A CPU list as the kernel prints one ("0-3,8,10-11", cpulist_parse's
 * format; blanks before it, a newline after it): how many CPUs it has
 * and the lowest (0 for an empty list).  Ranges in increasing order, CPU
 * numbers below VMS_CPULIST_MAX; anything else -EINVAL. */
#define VMS_CPULIST_MAX 65536u
int vms_parse_cpulist(const char *s, size_t len, uint32_t *count, uint32_t *first);
/* /proc/<pid>/task/<tid>/status: its Cpus_allowed_list line (the
 * thread's affinity, sched_setaffinity(2)) as vms_parse_cpulist reads
 * it; -ENOENT without that line (before Linux 2.6.26). */
int vms_parse_status_cpus(const char *buf, size_t len, uint32_t *count, uint32_t *first);

/* /proc/<pid>/task/<tid>/schedstat: "run_ns wait_ns timeslices" on the
 * first line (exactly three numbers); later lines are ignored. */
struct vms_schedstat {
	uint64_t run_ns, wait_ns, slices;
};
int vms_parse_schedstat(const char *buf, size_t len, struct vms_schedstat *out);

/* Files of "key value" or "key: value" lines (/proc/<pid>/io, cgroup
 * cpu.stat, cpuacct.stat): out[i] = the value of keys[i], VMS_NONE where
 * the key is absent; unknown keys are skipped.  A line whose value is not
 * one number, or a key given twice, is -EINVAL (-ERANGE on overflow). */
int vms_parse_keyed(const char *buf, size_t len, const char *const *keys, unsigned nkeys,
		    uint64_t *out);

/* A file holding one number and a newline (cpuacct.usage,
 * memory.current, memory.usage_in_bytes). */
int vms_parse_u64_file(const char *buf, size_t len, uint64_t *out);

/* A cgroup limit: one number, or "max" (cgroup2) or "-1" (v1
 * cpu.cfs_quota_us), both VMS_CG_UNLIMITED.  cpu.max: "QUOTA PERIOD" with
 * QUOTA a number or "max". */
#define VMS_CG_UNLIMITED (UINT64_MAX - 1)
int vms_parse_cg_limit(const char *buf, size_t len, uint64_t *out);
int vms_parse_cpu_max(const char *buf, size_t len, uint64_t *quota, uint64_t *period);

/* cgroup v2 io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N ..." per device;
 * the sums over devices of rbytes and wbytes (VMS_NONE if no line has
 * them). */
int vms_parse_iostat(const char *buf, size_t len, uint64_t *rbytes, uint64_t *wbytes);

/* /proc/<pid>/cgroup: "ID:controllers:path" lines.  The v2 path (the "0::"
 * line) and the v1 paths of the controllers we read, as views into the
 * buffer (len 0: not there).  A path must start with '/'. */
struct vms_pidcg {
	const char *v2, *cpuacct, *memory, *cpu;
	size_t v2_len, cpuacct_len, memory_len, cpu_len;
};
int vms_parse_pidcg(const char *buf, size_t len, struct vms_pidcg *out);

/* /proc/self/mountinfo, one line per call (the line iterator convention
 * above).  Views into the buffer; the mount point is still escaped
 * (\040 for a blank: see vms_unescape_octal). */
struct vms_mount {
	const char *root, *point, *fstype, *super;
	size_t root_len, point_len, fstype_len, super_len;
};
int vms_mountinfo_next(struct vms_cur *c, struct vms_mount *out);
/* Undo mountinfo's \ooo escapes of src[0..len) into dst (at most cap
 * bytes with the NUL).  The length, or -ENAMETOOLONG / -EINVAL. */
int vms_unescape_octal(const char *src, size_t len, char *dst, size_t cap);
/* True if the comma-separated list has the item. */
bool vms_list_has(const char *list, size_t len, const char *item);

/* A vCPU thread's name as QEMU sets it, "CPU <n>/KVM" or "CPU <n>/TCG"
 * (any accelerator name): n, or -1. */
int vms_vcpu_thread_index(const char *comm, size_t len);

#endif
