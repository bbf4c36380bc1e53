/* SPDX-License-Identifier: MIT */
/* catalog.c - the column catalogue (see catalog.h): each group's name
 * layout, and each field's kind, unit and meaning.  vmsampler(1) lists
 * the same fields (tests/test_catalog.c checks it). */
#include "catalog.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <vmsampler/format.h>

#include "cursor.h"
#include "vms.h"

#define CNT(n, u, d) {n, VMS_KIND_COUNTER, VMS_UNIT_##u, d}
#define GAU(n, u, d) {n, VMS_KIND_GAUGE, VMS_UNIT_##u, d}

/* in the order of vms_stat_cpu_field_names (enum vms_cpu_field) */
static const struct vms_catfield cpu_f[] = {
	CNT("user", TICKS, "time in user mode, guest time included"),
	CNT("nice", TICKS, "time in user mode at low priority, guest_nice included"),
	CNT("system", TICKS, "time in kernel mode"),
	CNT("idle", TICKS, "idle time"),
	CNT("iowait", TICKS, "idle time with I/O outstanding"),
	CNT("irq", TICKS, "time serving hardware interrupts"),
	CNT("softirq", TICKS, "time serving softirqs"),
	CNT("steal", TICKS, "time stolen by the hypervisor"),
	CNT("guest", TICKS, "time running guests' vCPUs"),
	CNT("guest_nice", TICKS, "time running niced guests' vCPUs"),
};

static const struct vms_catfield stat_f[] = {
	CNT("ctxt", COUNT, "context switches"),
	CNT("processes", COUNT, "processes and threads created"),
	CNT("intr", COUNT, "interrupts serviced"),
	CNT("softirq", COUNT, "softirqs serviced"),
	GAU("procs_running", TASKS, "tasks runnable"),
	GAU("procs_blocked", TASKS, "tasks blocked on I/O"),
};

static const struct vms_catfield load_f[] = {
	GAU("1m", LOAD, "load average over 1 minute"),
	GAU("5m", LOAD, "load average over 5 minutes"),
	GAU("15m", LOAD, "load average over 15 minutes"),
	GAU("runnable", TASKS, "runnable scheduling entities"),
	GAU("tasks", TASKS, "scheduling entities"),
};

static const struct vms_catfield psi_f[] = {
	CNT("some.total", US, "time some tasks stalled on the resource"),
	CNT("full.total", US, "time all non-idle tasks stalled on the resource"),
};

/* in the order of vms_disk_field_names */
static const struct vms_catfield disk_f[] = {
	CNT("rd_ios", COUNT, "reads completed"),
	CNT("rd_merges", COUNT, "reads merged"),
	CNT("rd_sectors", SECTORS, "sectors read"),
	CNT("rd_ticks", MS, "time spent reading"),
	CNT("wr_ios", COUNT, "writes completed"),
	CNT("wr_merges", COUNT, "writes merged"),
	CNT("wr_sectors", SECTORS, "sectors written"),
	CNT("wr_ticks", MS, "time spent writing"),
	GAU("in_flight", COUNT, "I/Os in progress"),
	CNT("io_ticks", MS, "time spent doing I/O"),
	CNT("time_in_queue", MS, "weighted time spent doing I/O"),
	CNT("dc_ios", COUNT, "discards completed"),
	CNT("dc_merges", COUNT, "discards merged"),
	CNT("dc_sectors", SECTORS, "sectors discarded"),
	CNT("dc_ticks", MS, "time spent discarding"),
	CNT("fl_ios", COUNT, "flushes completed"),
	CNT("fl_ticks", MS, "time spent flushing"),
};

/* in the order of vms_net_field_names; a VM's taps have the first four
 * of each direction */
static const struct vms_catfield net_f[] = {
	CNT("rx_bytes", BYTES, "bytes received"),
	CNT("rx_packets", COUNT, "packets received"),
	CNT("rx_errs", COUNT, "receive errors"),
	CNT("rx_drop", COUNT, "received packets dropped"),
	CNT("rx_fifo", COUNT, "receive FIFO overruns"),
	CNT("rx_frame", COUNT, "receive framing errors"),
	CNT("rx_compressed", COUNT, "compressed packets received"),
	CNT("rx_multicast", COUNT, "multicast packets received"),
	CNT("tx_bytes", BYTES, "bytes sent"),
	CNT("tx_packets", COUNT, "packets sent"),
	CNT("tx_errs", COUNT, "transmit errors"),
	CNT("tx_drop", COUNT, "packets dropped on transmit"),
	CNT("tx_fifo", COUNT, "transmit FIFO overruns"),
	CNT("tx_colls", COUNT, "collisions"),
	CNT("tx_carrier", COUNT, "carrier losses"),
	CNT("tx_compressed", COUNT, "compressed packets sent"),
};

static const struct vms_catfield perf_f[] = {
	CNT("time_enabled", NS, "time the software events' group was enabled"),
	CNT("time_running", NS, "time the software events' group was counting"),
	CNT("tp_time_enabled", NS, "time the tracepoints' group was enabled"),
	CNT("tp_time_running", NS, "time the tracepoints' group was counting"),
	CNT("hw_time_enabled", NS, "time the hardware events' group was enabled"),
	CNT("hw_time_running", NS, "time the hardware events' group was counting"),
};

static const struct vms_catfield virt_f[] = {
	GAU("connected", NONE, "1 while the agent has a libvirt connection"),
	GAU("domains", COUNT, "running domains"),
	CNT("agent_restarts", COUNT, "restarts of the agent"),
};

static const struct vms_catfield vms_f[] = {
	CNT("parse_errors", COUNT, "malformed lines skipped"),
	CNT("marks", COUNT, "markers taken"),
	CNT("marks_refused", COUNT, "markers refused"),
};

static const struct vms_catfield vm_f[] = {
	GAU("state", STATE, "libvirt state"),
	GAU("path", NONE, "where the fast values come from"),
	CNT("cpu_time", NS, "CPU time of the VM"),
	CNT("cpu_user", NS, "user CPU time of the VM"),
	CNT("cpu_system", NS, "system CPU time of the VM"),
	GAU("slow_t", NS_EPOCH, "when libvirt returned the slow values"),
};

static const struct vms_catfield vcpu_f[] = {
	CNT("time", NS, "time the vCPU thread ran"),
	CNT("delay", NS, "time the vCPU thread waited for a host CPU"),
	CNT("slices", COUNT, "time slices the vCPU thread ran"),
	GAU("pcpu", NONE, "the host CPU the vCPU thread last ran on"),
	GAU("allowed", COUNT, "host CPUs the vCPU thread may run on (its affinity)"),
	GAU("allowed_first", NONE, "the first host CPU of its affinity"),
};

static const struct vms_catfield intr_f[] = {
	CNT("sum", COUNT, "interrupts of every source (sar -I SUM)"),
};

/* the vectors of /proc/softirqs (kernel/softirq.c softirq_to_name) */
static const struct vms_catfield softirq_f[] = {
	CNT("HI", COUNT, "high-priority tasklets"),
	CNT("TIMER", COUNT, "timer softirqs"),
	CNT("NET_TX", COUNT, "network transmit softirqs"),
	CNT("NET_RX", COUNT, "network receive softirqs"),
	CNT("BLOCK", COUNT, "block completion softirqs"),
	CNT("IRQ_POLL", COUNT, "irq_poll softirqs"),
	CNT("TASKLET", COUNT, "tasklets"),
	CNT("SCHED", COUNT, "scheduler (load balancing) softirqs"),
	CNT("HRTIMER", COUNT, "high-resolution timer softirqs"),
	CNT("RCU", COUNT, "RCU softirqs"),
};

/* a CPU's line of /proc/schedstat: the fields of a vCPU's schedstat
 * (vcpu_f), summed over the tasks that ran on the CPU */
static const struct vms_catfield sched_f[] = {
	CNT("time", NS, "time the CPU ran tasks"),
	CNT("delay", NS, "time tasks waited on the CPU's run queue"),
	CNT("slices", COUNT, "time slices the CPU ran"),
};

/* a CPU's run queue as the interference program measures it (BPF):
 * sched_f's delay, also where the kernel has no /proc/schedstat */
static const struct vms_catfield rq_f[] = {
	CNT("delay", NS, "time tasks waited on the CPU's run queue (BPF: each task's run delay at its switch-out)"),
};

static const struct vms_catfield vmintf_f[] = {
	CNT("wait", NS, "run delay of the VM's vCPUs the program saw"),
	CNT("vms", NS, "of it, waiting behind other VMs"),
	CNT("own", NS, "of it, waiting behind the VM's own other threads"),
	CNT("host", NS, "of it, waiting behind host processes"),
	CNT("host_other", NS, "of host, behind the cgroups not named (vmintfhost)"),
	CNT("kernel", NS, "of it, waiting behind the kernel (interrupts, softirqs, kernel threads)"),
	CNT("unknown", NS, "of it, not placed (the program's ring overflowed)"),
	CNT("irq_est", NS, "of it, estimated in interrupts and softirqs (inside the parts above, not besides)"),
};

static const struct vms_catfield vmintfest_f[] = {
	CNT("wait", NS, "run delay of the VM's vCPUs (schedstat): the sum of the estimates below"),
	CNT("vms", NS, "of it, estimated behind other VMs' threads"),
	CNT("own", NS, "of it, estimated behind the VM's own other threads"),
	CNT("host", NS, "of it, estimated behind the host's other tasks"),
	CNT("irq", NS, "of it, estimated behind interrupts and softirqs"),
	CNT("unknown", NS, "of it, not placed (nothing else ran on the CPU, a file not read)"),
};

static const struct vms_catfield vmio_f[] = {
	CNT("read_bytes", BYTES, "bytes QEMU read from storage"),
	CNT("write_bytes", BYTES, "bytes QEMU wrote to storage"),
	CNT("cg_read_bytes", BYTES, "bytes the VM's cgroup read"),
	CNT("cg_write_bytes", BYTES, "bytes the VM's cgroup wrote"),
};

static const struct vms_catfield vmmem_f[] = {
	GAU("rss", BYTES, "resident memory of QEMU"),
	GAU("cgroup", BYTES, "memory charged to the VM's cgroup"),
};

/* in the order of vms_vm_balloon (virt_proto.c) */
static const struct vms_catfield vms_cat_balloon[] = {
	GAU("current", KIB, "balloon size"),
	GAU("maximum", KIB, "memory the guest may have"),
	CNT("swap_in", KIB, "memory the guest swapped in"),
	CNT("swap_out", KIB, "memory the guest swapped out"),
	CNT("major_fault", COUNT, "major page faults in the guest"),
	CNT("minor_fault", COUNT, "minor page faults in the guest"),
	GAU("unused", KIB, "memory the guest leaves unused"),
	GAU("available", KIB, "memory the guest sees"),
	GAU("usable", KIB, "memory the guest could use without swapping"),
	GAU("last_update", NONE, "when the guest updated these, s since the epoch"),
	GAU("disk_caches", KIB, "guest memory that can be reclaimed"),
	CNT("hugetlb_pgalloc", COUNT, "huge page allocations in the guest"),
	CNT("hugetlb_pgfail", COUNT, "failed huge page allocations in the guest"),
	GAU("rss", KIB, "resident memory of QEMU, as libvirt reads it"),
};

static const struct vms_catfield vms_cat_block[] = {
	CNT("rd_reqs", COUNT, "read requests"),
	CNT("rd_bytes", BYTES, "bytes read"),
	CNT("rd_times", NS, "time spent reading"),
	CNT("wr_reqs", COUNT, "write requests"),
	CNT("wr_bytes", BYTES, "bytes written"),
	CNT("wr_times", NS, "time spent writing"),
	CNT("fl_reqs", COUNT, "flush requests"),
	CNT("fl_times", NS, "time spent flushing"),
	GAU("allocation", BYTES, "highest allocated offset"),
	GAU("capacity", BYTES, "logical size"),
	GAU("physical", BYTES, "size on the host"),
};

/* in the order of enum vms_vmcg_field (sampler/sources/vm_kernel.h) */
static const struct vms_catfield vmcg_f[] = {
	GAU("cpu_quota_us", US, "CPU quota per period (cpu.max)"),
	GAU("cpu_period_us", US, "CPU period (cpu.max)"),
	GAU("cpu_weight", COUNT, "CPU weight"),
	GAU("cpu_shares", COUNT, "CPU shares (cgroup v1)"),
	CNT("nr_periods", COUNT, "enforcement periods elapsed"),
	CNT("nr_throttled", COUNT, "periods in which it was throttled"),
	CNT("throttled", NS, "time throttled"),
	GAU("mem_max", BYTES, "memory limit"),
	GAU("mem_high", BYTES, "memory throttling threshold"),
	CNT("ev_high", COUNT, "times over memory.high"),
	CNT("ev_max", COUNT, "times at memory.max"),
	CNT("ev_oom", COUNT, "out-of-memory events"),
	CNT("ev_oom_kill", COUNT, "processes killed by the OOM killer"),
	GAU("anon", BYTES, "anonymous memory"),
	GAU("file", BYTES, "page cache"),
	GAU("swap", BYTES, "swap used"),
	CNT("pgmajfault", COUNT, "major page faults"),
	CNT("psi.cpu.some.total", US, "time some tasks stalled on CPU"),
	CNT("psi.cpu.full.total", US, "time all tasks stalled on CPU"),
	CNT("psi.memory.some.total", US, "time some tasks stalled on memory"),
	CNT("psi.memory.full.total", US, "time all tasks stalled on memory"),
	CNT("psi.io.some.total", US, "time some tasks stalled on I/O"),
	CNT("psi.io.full.total", US, "time all tasks stalled on I/O"),
};

static const struct vms_catfield vmlv_f[] = {
	CNT("cpu_time", NS, "cpu_time as libvirt gives it"),
	CNT("cpu_user", NS, "cpu_user as libvirt gives it"),
	CNT("cpu_system", NS, "cpu_system as libvirt gives it"),
};

static const struct vms_catfield vmlvvcpu_f[] = {
	CNT("time", NS, "vCPU time as libvirt gives it"),
	CNT("delay", NS, "vCPU delay as libvirt gives it"),
};

static const struct vms_catfield vms_cat_dirty[] = {
	GAU("calc_status", STATE, "dirty-rate measurement status"),
	GAU("calc_start_time", NONE, "when the measurement began, s on QEMU's clock"),
	GAU("calc_period", NONE, "length of the measurement, s"),
	GAU("megabytes_per_second", NONE, "memory dirtied, MiB/s"),
};

static const struct vms_catfield vms_cat_mig[] = {
	GAU("job", STATE, "libvirt's job type"),
	GAU("time_elapsed", MS, "time since the job began"),
	GAU("time_remaining", MS, "expected time to the end"),
	GAU("setup_time", MS, "time to set the migration up"),
	GAU("downtime_expected", MS, "expected downtime"),
	GAU("downtime", MS, "real downtime"),
	GAU("data_total", BYTES, "data to transfer"),
	CNT("data_processed", BYTES, "data transferred"),
	GAU("data_remaining", BYTES, "data left"),
	GAU("memory_total", BYTES, "memory to transfer"),
	CNT("memory_processed", BYTES, "memory transferred"),
	GAU("memory_remaining", BYTES, "memory left"),
	GAU("memory_bps", NONE, "memory transfer rate, bytes/s"),
	GAU("memory_dirty_rate", NONE, "pages dirtied per second"),
	GAU("memory_iteration", COUNT, "passes over the memory"),
	GAU("memory_page_size", BYTES, "page size"),
	CNT("memory_constant", PAGES, "zero pages"),
	CNT("memory_normal", PAGES, "pages transferred whole"),
	CNT("memory_normal_bytes", BYTES, "bytes of pages transferred whole"),
	CNT("memory_postcopy_requests", COUNT, "post-copy page requests"),
	GAU("disk_total", BYTES, "disk data to transfer"),
	CNT("disk_processed", BYTES, "disk data transferred"),
	GAU("disk_remaining", BYTES, "disk data left"),
	GAU("disk_bps", NONE, "disk transfer rate, bytes/s"),
};

#undef CNT
#undef GAU

#define T(a) a, VMS_ARRAY_SIZE(a)
const struct vms_catgroup vms_catalog[VMS_G_N] = {
	[VMS_G_NONE] = {"", "", "", 0, 0, 1, NULL, 0, "not in the catalogue"},
	[VMS_G_CPU] = {"cpu", "cpu.", "", 1, 0, 0, T(cpu_f), "a CPU (all: the sum)"},
	[VMS_G_STAT] = {"stat", "stat.", "", 0, 0, 0, T(stat_f), "/proc/stat totals"},
	[VMS_G_LOAD] = {"load", "load.", "", 0, 0, 0, T(load_f), "/proc/loadavg"},
	[VMS_G_MEM] = {"mem", "mem.", "", 0, 0, 1, NULL, 0, "a /proc/meminfo line"},
	[VMS_G_VMSTAT] = {"vmstat", "vmstat.", "", 0, 0, 1, NULL, 0, "a /proc/vmstat counter"},
	[VMS_G_PSI] = {"psi", "psi.", "", 1, 0, 0, T(psi_f), "pressure stall of a resource"},
	[VMS_G_DISK] = {"disk", "disk.", "", 1, 0, 0, T(disk_f), "a block device"},
	[VMS_G_NET] = {"net", "net.", "", 1, 0, 0, T(net_f), "a network interface"},
	[VMS_G_PERF] = {"perf", "perf.", "", 1, 0, 1, T(perf_f), "perf events of a CPU (all: the sum)"},
	[VMS_G_VIRT] = {"virt", "virt.", "", 0, 0, 0, T(virt_f), "the libvirt agent"},
	[VMS_G_VMS] = {"vms", "vms.", "", 0, 0, 0, T(vms_f), "vmsampler itself"},
	[VMS_G_VM] = {"vm", "vm.", "", 1, 0, 0, T(vm_f), "a VM"},
	[VMS_G_VCPU] = {"vcpu", "vm.", "vcpu", 1, 2, 0, T(vcpu_f), "a vCPU of a VM"},
	[VMS_G_VMNET] = {"vmnet", "vm.", "net.", 1, 1, 0, T(net_f), "a tap of a VM, in the guest's direction"},
	[VMS_G_VMIO] = {"vmio", "vm.", "io.", 1, 0, 0, T(vmio_f), "a VM's storage I/O"},
	[VMS_G_VMMEM] = {"vmmem", "vm.", "mem.", 1, 0, 0, T(vmmem_f), "a VM's memory on the host"},
	[VMS_G_VMBALLOON] = {"vmballoon", "vm.", "balloon.", 1, 0, 0, T(vms_cat_balloon), "a VM's balloon"},
	[VMS_G_VMBLOCK] = {"vmblock", "vm.", "block.", 1, 1, 0, T(vms_cat_block), "a disk of a VM"},
	[VMS_G_VMCG] = {"vmcg", "vm.", "cg.", 1, 0, 0, T(vmcg_f), "a VM's cgroup"},
	[VMS_G_VMLV] = {"vmlv", "vm.", "lv.", 1, 0, 0, T(vmlv_f), "libvirt's values of a VM (cross-check)"},
	[VMS_G_VMLVVCPU] = {"vmlvvcpu", "vm.", "lv.vcpu", 1, 2, 0, T(vmlvvcpu_f),
			    "libvirt's values of a vCPU (cross-check)"},
	[VMS_G_VMDIRTY] = {"vmdirty", "vm.", "dirtyrate.", 1, 0, 0, T(vms_cat_dirty), "a VM's dirty rate"},
	[VMS_G_VMMIG] = {"vmmig", "vm.", "migration.", 1, 0, 0, T(vms_cat_mig), "a VM's migration job"},
	[VMS_G_VMPERF] = {"vmperf", "vm.", "perf.", 1, 0, 1, T(perf_f), "perf events of a VM"},
	[VMS_G_INTR] = {"intr", "intr.", "", 1, 0, 1, T(intr_f), "interrupts of a CPU (all: the sum), per source"},
	[VMS_G_SOFTIRQ] = {"softirq", "softirq.", "", 1, 0, 1, T(softirq_f), "softirqs of a CPU (all: the sum)"},
	[VMS_G_VMINTF] = {"vmintf", "vm.", "intf.", 1, 0, 0, T(vmintf_f), "whom a VM's vCPUs waited behind"},
	[VMS_G_VMINTFBY] = {"vmintfby", "vm.", "intf.by.", 1, 0, 1, NULL, 0,
			    "a VM's vCPUs' wait behind one other VM (the field is that VM's name)"},
	[VMS_G_VMINTFHOST] = {"vmintfhost", "vm.", "intf.host.", 1, 0, 1, NULL, 0,
			      "a VM's vCPUs' wait behind one of the host's top cgroups (the field is its path)"},
	[VMS_G_VMINTFEST] = {"vmintfest", "vm.", "intfest.", 1, 0, 0, T(vmintfest_f),
			     "whom a VM's vCPUs waited behind, estimated without BPF"},
	[VMS_G_VMINTFESTBY] = {"vmintfestby", "vm.", "intfest.by.", 1, 0, 1, NULL, 0,
			       "a VM's vCPUs' wait behind one other VM, estimated (the field is that VM's name)"},
	[VMS_G_SCHED] = {"sched", "sched.", "", 1, 0, 0, T(sched_f), "run queue of a CPU (/proc/schedstat)"},
	[VMS_G_RQ] = {"rq", "rq.", "", 1, 0, 0, T(rq_f), "run queue of a CPU (the interference program, BPF)"},
};
#undef T

unsigned vms_catalog_group(const char *name, size_t len)
{
	for (unsigned g = 1; g < VMS_G_N; g++)
		if (strlen(vms_catalog[g].name) == len && memcmp(vms_catalog[g].name, name, len) == 0)
			return g;
	return VMS_G_NONE;
}

/* The field named by the len bytes at f in group g, or VMS_FIELD_OPEN. */
static unsigned field_n(unsigned g, const char *f, size_t len)
{
	const struct vms_catgroup *c = &vms_catalog[g];
	for (unsigned i = 0; i < c->nfields; i++)
		if (strlen(c->fields[i].name) == len && memcmp(c->fields[i].name, f, len) == 0)
			return i;
	return VMS_FIELD_OPEN;
}

unsigned vms_catalog_field(unsigned g, const char *field)
{
	return g < VMS_G_N ? field_n(g, field, strlen(field)) : VMS_FIELD_OPEN;
}

const struct vms_catfield *vms_catalog_entry(unsigned g, unsigned field_id)
{
	if (g >= VMS_G_N || field_id >= vms_catalog[g].nfields)
		return NULL;
	return &vms_catalog[g].fields[field_id];
}

int vms_colname(char *buf, size_t cap, unsigned group, const char *entity, const char *sub,
		const char *field)
{
	if (group == VMS_G_NONE || group >= VMS_G_N || !field || !*field)
		return -EINVAL;
	const struct vms_catgroup *c = &vms_catalog[group];
	bool he = entity && *entity, hs = sub && *sub;
	if (he != !!c->entity || hs != !!c->sub)
		return -EINVAL;
	size_t n = 0;
	const char *parts[] = {c->head, he ? entity : "", he ? "." : "", c->mid, hs ? sub : "",
			       hs ? "." : "", field};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(parts); i++) {
		size_t l = strlen(parts[i]);
		if (n + l >= cap)
			return -ENAMETOOLONG;
		memcpy(buf + n, parts[i], l);
		n += l;
	}
	buf[n] = '\0';
	return (int)n;
}

/* ---- old data: the identity from the name ------------------------------------ */

/* The known field that ends rest (after a dot, leaving at least min bytes
 * before it): its index and offset, or false. */
static bool field_suffix(unsigned g, const char *rest, size_t len, size_t min, unsigned *fi, size_t *off)
{
	const struct vms_catgroup *c = &vms_catalog[g];
	size_t best = 0;
	bool found = false;
	for (unsigned i = 0; i < c->nfields; i++) {
		size_t fl = strlen(c->fields[i].name);
		if (fl + 1 + min > len || rest[len - fl - 1] != '.' ||
		    memcmp(rest + len - fl, c->fields[i].name, fl) != 0)
			continue;
		if (!found || fl > best) {
			best = fl;
			*fi = i;
			found = true;
		}
	}
	if (found)
		*off = len - best;
	return found;
}

/* Does name fit group g?  The parts' offsets and lengths. */
static bool fits(unsigned g, const char *name, size_t pos[3], size_t len[3], unsigned *fi)
{
	const struct vms_catgroup *c = &vms_catalog[g];
	size_t hl = strlen(c->head), nl = strlen(name), p = hl;
	if (nl <= hl || memcmp(name, c->head, hl) != 0)
		return false;
	memset(len, 0, 3 * sizeof(*len));
	memset(pos, 0, 3 * sizeof(*pos));
	if (c->entity && !c->open && strcmp(c->head, "vm.") != 0) {
		/* a host's device, interface, CPU: anything before the field */
		size_t off;
		if (!field_suffix(g, name + p, nl - p, 1, fi, &off))
			return false;
		pos[0] = p;
		len[0] = off - 1;
		pos[2] = p + off;
		len[2] = nl - p - off;
		return true;
	}
	if (c->entity) {
		/* a VM's name (never has a dot), a perf scope: up to the next dot */
		const char *d = strchr(name + p, '.');
		if (!d || d == name + p)
			return false;
		pos[0] = p;
		len[0] = (size_t)(d - name) - p;
		p += len[0] + 1;
	}
	size_t ml = strlen(c->mid);
	if (ml && (nl - p <= ml || memcmp(name + p, c->mid, ml) != 0))
		return false;
	p += ml;
	if (c->sub) {
		size_t off;
		if (!field_suffix(g, name + p, nl - p, 1, fi, &off))
			return false;
		pos[1] = p;
		len[1] = off - 1;
		if (c->sub == 2 && !vms_all_digits(name + p, len[1]))
			return false;
		p += off;
	}
	pos[2] = p;
	len[2] = nl - p;
	if (!len[2])
		return false;
	*fi = field_n(g, name + p, len[2]);
	return *fi != VMS_FIELD_OPEN || c->open;
}

unsigned vms_catalog_derive(const char *name, struct vms_colid *id, char *buf, size_t cap)
{
	size_t pos[3], len[3];
	unsigned fi = VMS_FIELD_OPEN;
	*id = (struct vms_colid){.group = VMS_G_NONE, .field_id = VMS_FIELD_OPEN, .entity = "", .sub = "",
				 .field = ""};
	for (unsigned g = 1; g < VMS_G_N; g++) {
		if (!fits(g, name, pos, len, &fi))
			continue;
		if (len[0] + len[1] + len[2] + 3 > cap)
			return VMS_G_NONE;
		const char **out[3] = {&id->entity, &id->sub, &id->field};
		for (int k = 0; k < 3; k++) {
			memcpy(buf, name + pos[k], len[k]);
			buf[len[k]] = '\0';
			*out[k] = buf;
			buf += len[k] + 1;
		}
		id->group = (uint8_t)g;
		id->field_id = (uint16_t)fi;
		return g;
	}
	return VMS_G_NONE;
}
