/* SPDX-License-Identifier: MIT */
/* vm_kernel.h - the per-VM fast path: one VM's counters from the kernel,
 * through files opened once when the VM is declared and kept open while
 * it lives (what equals what: tests/vmlab/FACTS.md).
 *
 *   cpu_time/user/system  cgroup2 <vm>/cpu.stat usage/user/system_usec
 *                         x 1000 (= libvirt cpu.time/user/system), or v1
 *                         cpuacct.usage and cpuacct.stat x 10^9/USER_HZ
 *   vcpuN.time/delay/slices  /proc/<pid>/task/<tid>/schedstat of the vCPU
 *                         thread (delay = libvirt vcpu.N.delay)
 *   vcpuN.pcpu/allowed/allowed_first  the vCPU thread's processor (field
 *                         39 of /proc/<pid>/task/<tid>/stat) and its
 *                         affinity (Cpus_allowed_list of .../status: how
 *                         many CPUs, the lowest), on the detail ticks
 *                         only: each file costs the kernel 4 and 8
 *                         schedstat reads' time (it formats 52 fields, and
 *                         some 55 lines), and both change only when the
 *                         scheduler or somebody pinning moves the thread
 *   net.<tap>.*           the tap's line in /proc/net/dev, swapped to the
 *                         guest's view (= libvirt net.N.*)
 *   io.read/write_bytes   /proc/<pid>/io read_bytes, write_bytes
 *   io.cg_read/write_bytes  cgroup2 <vm>/io.stat rbytes, wbytes summed
 *   mem.rss               /proc/<pid>/stat rss x page size (= libvirt
 *                         balloon.rss x 1024; not the cheaper statm: on
 *                         Linux 6.18 it sums the per-CPU counters exactly
 *                         and read 2314 pages where stat read 2260 for the
 *                         same stopped process, 2026-11-28), on the detail
 *                         ticks only (the costliest of the files that
 *                         were read every tick)
 *   mem.cgroup            cgroup2 memory.current or v1
 *                         memory.usage_in_bytes
 *   cg.*                  the VM's cgroup limits, throttling, memory
 *                         events and breakdown, and pressure (vms_vmcg_field:
 *                         each from the cgroup2 file if the VM's group has
 *                         it, else the v1 one; a field no file gives has
 *                         no column).  The detail files (memory
 *                         breakdown, memory events, swap, pressure) are
 *                         read only on the ticks the caller says
 *                         (sources.libvirt.detail_interval)
 * Reading allocates nothing and never blocks (procfs and cgroupfs reads);
 * a file of a process that exited reads ESRCH, of a removed cgroup
 * ENODEV: the VM is gone. */
#ifndef VMS_VM_KERNEL_H
#define VMS_VM_KERNEL_H

#include "cgroup.h"
#include "parse.h"
#include "virt_proto.h"
#include "vmtab.h"

/* One VM's columns, relative to its first; -1: not declared. */
struct vms_vmlay {
	int32_t state, path, cpu, vcpu, net, io, iocg, mem, balloon, block, cg, place, check, slow_t;
	int32_t dirty;         /* dirtyrate.* columns after slow_t, -1: none */
	int32_t mig;           /* migration.* columns after those, -1: none */
	uint32_t ncol;
	uint16_t nvcpu, ntap, ndisk;
};
#define VMS_VM_NET_FIELDS 8 /* rx bytes packets errs drop, tx ... */
#define VMS_VM_VCPU_FIELDS 3 /* time delay slices */
/* Each vCPU's placement (after the cg.* columns; kernel only, no group):
 * the host CPU it last ran on, how many host CPUs its affinity allows,
 * and the lowest of them. */
#define VMS_VM_PLACE_FIELDS 3
extern const char *const vms_vmk_place_cols[VMS_VM_PLACE_FIELDS];

/* ncg: the VM's cg.* columns (vms_vmcg_ncols), after its block columns. */
void vms_vmlay_init(struct vms_vmlay *l, unsigned nvcpu, unsigned ntap, unsigned ndisk, bool iocg,
		    unsigned ncg, bool check);

/* The VM's dirtyrate.* columns (VMS_VM_NDIRTY), declared before any
 * migration.* ones when dirty-rate sampling is on. */
void vms_vmlay_add_dirty(struct vms_vmlay *l);

/* The VM's migration.* columns (VMS_VM_NMIG), after all the others:
 * declared once the agent sent migration values for it. */
void vms_vmlay_add_mig(struct vms_vmlay *l);

/* The cg.* fields, in column order. */
enum vms_vmcg_field {
	VMS_CGF_CPU_QUOTA, VMS_CGF_CPU_PERIOD, VMS_CGF_CPU_WEIGHT, VMS_CGF_CPU_SHARES,
	VMS_CGF_NR_PERIODS, VMS_CGF_NR_THROTTLED, VMS_CGF_THROTTLED,
	VMS_CGF_MEM_MAX, VMS_CGF_MEM_HIGH,
	VMS_CGF_EV_HIGH, VMS_CGF_EV_MAX, VMS_CGF_EV_OOM, VMS_CGF_EV_OOM_KILL,
	VMS_CGF_ANON, VMS_CGF_FILE, VMS_CGF_SWAP, VMS_CGF_PGMAJFAULT,
	VMS_CGF_PSI_CPU_SOME, VMS_CGF_PSI_CPU_FULL, VMS_CGF_PSI_MEM_SOME, VMS_CGF_PSI_MEM_FULL,
	VMS_CGF_PSI_IO_SOME, VMS_CGF_PSI_IO_FULL,
	VMS_CGF_N
};
/* Field f's column is the catalogue's field f of group vmcg (catalog.c):
 * "vm.NAME.cg." and its name. */
#define VMS_CG_NFILES 18

/* A VM's cgroup files beyond usage (vm_kernel.c): the ones that give a
 * field, kept open; have: the fields they give (bit VMS_CGF_*).
 *
 * Limits (cpu.max, cpu.weight, memory.max, memory.high and v1's
 * cfs_quota_us, cfs_period_us, shares, limit_in_bytes) change only when
 * somebody writes them, and every write(2) to a file queues an inotify
 * IN_MODIFY (the VFS's fsnotify_modify, cgroupfs included) before it
 * returns.  With an inotify instance (ino >= 0) each limit file is
 * watched, read once, and read again only after an event for it (or
 * cpu.weight.nice, which sets cpu.weight): the tick reads the instance
 * once (vms_vmcg_notify per event) instead of each limit of each VM.  A
 * file whose watch could not be added (or was removed: IN_IGNORED) is
 * read each tick as before; an overflow of the queue makes every cached
 * value stale (vms_vmcg_stale).
 *
 * The throttling counters of cpu.stat cannot move while the group has no
 * quota: with the quota file watched and unlimited since the last read of
 * cpu.stat, that read's values are given again instead (vm_kernel.c). */
struct vms_vmcg {
	int fd[VMS_CG_NFILES];
	uint32_t have;
	int ino;                          /* the instance of the watches, -1: none */
	int wd[VMS_CG_NFILES];            /* a limit file's watch, -1: read each tick */
	int wd_nice;                      /* cpu.weight.nice's watch (marks cpu.weight) */
	uint32_t fresh;                   /* watched files whose cache[] is current */
	uint32_t exact;                   /* cpu.stat files read while their quota was unlimited */
	uint64_t cache[VMS_CG_NFILES][4]; /* the fields of those as last read */
	uint64_t reads;                   /* files read by sample (tests count them) */
};
/* Open what the VM's group directories hold (NULL: not placed there),
 * reading each file once to learn its fields, watching the limit files
 * on ino (-1: none).  Never fails: a file that cannot be opened or read
 * gives no field. */
void vms_vmcg_open(struct vms_vmcg *g, const char *v2_dir, const char *cpu_dir, const char *mem_dir, int ino);
void vms_vmcg_close(struct vms_vmcg *g);
unsigned vms_vmcg_ncols(const struct vms_vmcg *g);
/* An inotify event (wd, mask) of g's instance: true if it is one of g's
 * watches (its file is read at the next sample). */
bool vms_vmcg_notify(struct vms_vmcg *g, int wd, uint32_t mask);
/* Every cached limit is read at the next sample (the queue overflowed). */
void vms_vmcg_stale(struct vms_vmcg *g);
/* The tick's look at the instance ino (non-blocking): its events into the
 * n groups at first, stride bytes apart (a group inside each of an array's
 * records); a queue overflow or a failed read makes all stale.  Allocates
 * nothing; one read(2) when nothing was written. */
void vms_vmcg_drain(int ino, struct vms_vmcg *first, size_t stride, unsigned n);
/* The fields into s[0 .. ncols) (VMS_NONE: not read this tick); the detail
 * files (vms_vmcg_detail) only when detail is set; scratch of cap bytes;
 * malformed files counted in *parse_errors.  Allocates nothing. */
void vms_vmcg_sample(struct vms_vmcg *g, uint64_t *s, char *scratch, size_t cap, bool detail,
		     uint32_t *parse_errors);
/* Whether field f (VMS_CGF_*) comes from a detail file: the memory
 * breakdown, memory events, swap and pressure (read on a slower cadence;
 * cpu.stat's throttling and the limits are not: every tick, or their
 * cached values where they cannot have changed). */
bool vms_vmcg_detail(unsigned f);
/* The column of a metric (enum vms_vmetric) and index, or -1. */
int32_t vms_vmlay_col(const struct vms_vmlay *l, unsigned metric, unsigned index);
/* The group (enum vms_vgroup) of column i (state, path, slow_t: 0). */
uint8_t vms_vmlay_group(const struct vms_vmlay *l, uint32_t i);

/* /proc/net/dev of this tick, one entry per interface line (no copies). */
struct vms_nettab {
	struct vms_netdev_hdr hdr;
	bool ok;             /* the header parsed */
	struct vms_nettab_ent {
		const char *name, *line;
		uint32_t name_len, line_len;
	} *ent;
	uint32_t n, cap;     /* cap: set at declare time, never grown here */
	bool full;           /* more lines than cap */
};
/* Index buf (a whole /proc/net/dev).  Allocates nothing. */
void vms_nettab_index(struct vms_nettab *t, const char *buf, size_t len);

/* This tick's interface counters from one rtnetlink RTM_GETSTATS dump
 * (netdev_nl.h), by ifindex: the same 16 fields /proc/net/dev prints,
 * without the kernel formatting a line for every interface (~1.9 us
 * each here, against ~0.4 us a stats message; sources.netdev.backend).
 * The taps' counters come from here when the dump worked. */
struct vms_nlstats {
	struct vms_nlstats_ent {
		int ifindex;
		uint64_t v[VMS_NET_FIELDS];
	} *ent;
	uint32_t n, cap;     /* cap: set at declare time, never grown here */
	bool ok, full;       /* full: more interfaces than cap */
};
/* vms_nl_ops.stats of a dump into the vms_nlstats arg.  Allocates nothing. */
void vms_nlstats_add(void *arg, int ifindex, const uint64_t v[VMS_NET_FIELDS]);

struct vms_vmk {
	int fd_stat, fd_io, fd_cpu, fd_acct_stat, fd_mem, fd_iostat;
	bool cpu_v1;
	uint64_t ns_per_tick;  /* v1 cpuacct.stat unit */
	uint64_t page_size;
	unsigned nvcpu;
	int *fd_sched;         /* per vCPU, -1: thread unknown */
	int *fd_tstat, *fd_tstatus; /* per vCPU: its stat and status (placement) */
	unsigned ntap;
	struct vms_vmk_tap {
		char name[VMS_VP_DEV_MAX + 1];
		int ifindex;         /* at open (if_nametoindex), 0: none */
		uint32_t hint;       /* its line (or stats entry) in the last tick */
	} *tap;
	uint8_t have;          /* groups whose files opened (VMS_VG_*) */
	int io_err;            /* errno of /proc/<pid>/io's open (EACCES: no CAP_SYS_PTRACE) */
	uint64_t reads;        /* files read by sample, cg's apart (tests count them) */
	struct vms_vmcg cg;    /* limits, throttling, events, pressure */
};

/* Open the files of vm (pid, vCPU threads, taps) under the proc root and
 * the cgroup mounts.  A file that cannot be opened leaves its group out of
 * k->have (the agent can serve it); 0 or -ENOMEM. */
int vms_vmk_open(struct vms_vmk *k, const struct vms_vm *vm, int proc_dirfd,
		 const struct vms_cgmounts *m, int ino);
void vms_vmk_close(struct vms_vmk *k);

/* Fill the VM's kernel columns of slots (laid out by l; the other columns
 * are left alone).  The taps from st when given (by ifindex), else from nt
 * (by name).  scratch holds one file at a time.  detail: one of the VM's
 * detail ticks (sources.libvirt.detail_interval): mem.rss and the cgroup
 * detail files are read only then, missing in the other ticks.  Returns
 * the groups read (the memory group also in a tick whose mem.rss is not
 * due: served, not failed); *gone is set when the process or its cgroup
 * has gone; malformed files are counted in *parse_errors and their values
 * left missing. */
unsigned vms_vmk_sample(struct vms_vmk *k, const struct vms_vmlay *l, uint64_t *slots,
			const struct vms_nettab *nt, const struct vms_nlstats *st, char *scratch, size_t cap,
			bool detail, bool *gone, uint32_t *parse_errors);

#endif
