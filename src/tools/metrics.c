/* SPDX-License-Identifier: MIT */
/* metrics.c - vmsampler's columns as Prometheus metric families, and the
 * exposition in Prometheus text 0.0.4 and OpenMetrics 1.0 (metrics.h). */
#include "metrics.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <vmsampler/reader.h>
#include "catalog.h"
#include "cursor.h"
#include "vms.h"

enum vms_mfam_id {
#define F(id, name, type, unit, labels, help, src) FAM_##id,
#include "metrics_fams.h"
#undef F
	FAM_N
};

const struct vms_mfam vms_mfams[] = {
#define F(id, name, type, unit, labels, help, src) {name, VMS_MT_##type, unit, labels, help, src},
#include "metrics_fams.h"
#undef F
};
const unsigned vms_nmfams = FAM_N;

/* conversions to the base unit, on top of the column's own scale */
enum conv { CV_1, CV_HZ, CV_MS, CV_US, CV_NS, CV_SECT, CV_KIB, CV_MIB };

struct rule {
	const char *field;
	uint16_t fam;
	uint8_t conv;
	const char *lname, *lval; /* one more label (mode="user"), or NULL */
};

static const struct rule cpu_rules[] = {
	{"user", FAM_NODE_CPU, CV_HZ, "mode", "user"},
	{"nice", FAM_NODE_CPU, CV_HZ, "mode", "nice"},
	{"system", FAM_NODE_CPU, CV_HZ, "mode", "system"},
	{"idle", FAM_NODE_CPU, CV_HZ, "mode", "idle"},
	{"iowait", FAM_NODE_CPU, CV_HZ, "mode", "iowait"},
	{"irq", FAM_NODE_CPU, CV_HZ, "mode", "irq"},
	{"softirq", FAM_NODE_CPU, CV_HZ, "mode", "softirq"},
	{"steal", FAM_NODE_CPU, CV_HZ, "mode", "steal"},
	{"guest", FAM_NODE_CPU_GUEST, CV_HZ, "mode", "user"},
	{"guest_nice", FAM_NODE_CPU_GUEST, CV_HZ, "mode", "nice"},
	{NULL, 0, 0, NULL, NULL},
};

/* /proc/schedstat per CPU: node_exporter's schedstat collector */
static const struct rule sched_rules[] = {
	{"time", FAM_NODE_SCHED_RUNNING, CV_NS, NULL, NULL},
	{"delay", FAM_NODE_SCHED_WAITING, CV_NS, NULL, NULL},
	{"slices", FAM_NODE_SCHED_TIMESLICES, CV_1, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

/* the same wait from the interference program (rq.N.delay) */
static const struct rule rq_rules[] = {
	{"delay", FAM_RQ_DELAY, CV_NS, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

/* the host's one-of-a-kind columns: group, entity (psi's resource), rule */
static const struct host_rule {
	uint8_t group;
	const char *ent;
	struct rule r;
} host_rules[] = {
	{VMS_G_STAT, "", {"ctxt", FAM_NODE_CTXT, CV_1, NULL, NULL}},
	{VMS_G_STAT, "", {"intr", FAM_NODE_INTR, CV_1, NULL, NULL}},
	{VMS_G_STAT, "", {"processes", FAM_NODE_FORKS, CV_1, NULL, NULL}},
	{VMS_G_STAT, "", {"softirq", FAM_SOFTIRQS, CV_1, NULL, NULL}},
	{VMS_G_STAT, "", {"procs_running", FAM_NODE_PROCS_RUNNING, CV_1, NULL, NULL}},
	{VMS_G_STAT, "", {"procs_blocked", FAM_NODE_PROCS_BLOCKED, CV_1, NULL, NULL}},
	{VMS_G_LOAD, "", {"1m", FAM_NODE_LOAD1, CV_1, NULL, NULL}},
	{VMS_G_LOAD, "", {"5m", FAM_NODE_LOAD5, CV_1, NULL, NULL}},
	{VMS_G_LOAD, "", {"15m", FAM_NODE_LOAD15, CV_1, NULL, NULL}},
	{VMS_G_LOAD, "", {"runnable", FAM_LOAD_RUNNABLE, CV_1, NULL, NULL}},
	{VMS_G_LOAD, "", {"tasks", FAM_LOAD_TASKS, CV_1, NULL, NULL}},
	{VMS_G_PSI, "cpu", {"some.total", FAM_NODE_PSI_CPU_SOME, CV_US, NULL, NULL}},
	{VMS_G_PSI, "cpu", {"full.total", FAM_PSI_CPU_FULL, CV_US, NULL, NULL}},
	{VMS_G_PSI, "io", {"some.total", FAM_NODE_PSI_IO_SOME, CV_US, NULL, NULL}},
	{VMS_G_PSI, "io", {"full.total", FAM_NODE_PSI_IO_FULL, CV_US, NULL, NULL}},
	{VMS_G_PSI, "memory", {"some.total", FAM_NODE_PSI_MEM_SOME, CV_US, NULL, NULL}},
	{VMS_G_PSI, "memory", {"full.total", FAM_NODE_PSI_MEM_FULL, CV_US, NULL, NULL}},
	{VMS_G_PSI, "irq", {"full.total", FAM_PSI_IRQ_FULL, CV_US, NULL, NULL}},
	{VMS_G_VIRT, "", {"domains", FAM_DOMAINS, CV_1, NULL, NULL}},
	{VMS_G_VIRT, "", {"connected", FAM_LV_CONNECTED, CV_1, NULL, NULL}},
	{VMS_G_VIRT, "", {"agent_restarts", FAM_LV_RESTARTS, CV_1, NULL, NULL}},
	{VMS_G_VMS, "", {"parse_errors", FAM_PARSE_ERRORS, CV_1, NULL, NULL}},
	{VMS_G_VMS, "", {"marks", FAM_MARKS, CV_1, NULL, NULL}},
	{VMS_G_VMS, "", {"marks_refused", FAM_MARKS_REFUSED, CV_1, NULL, NULL}},
};

static const struct rule disk_rules[] = {
	{"rd_ios", FAM_DISK_RD_IOS, CV_1, NULL, NULL},
	{"rd_merges", FAM_DISK_RD_MERGES, CV_1, NULL, NULL},
	{"rd_sectors", FAM_DISK_RD_BYTES, CV_SECT, NULL, NULL},
	{"rd_ticks", FAM_DISK_RD_TIME, CV_MS, NULL, NULL},
	{"wr_ios", FAM_DISK_WR_IOS, CV_1, NULL, NULL},
	{"wr_merges", FAM_DISK_WR_MERGES, CV_1, NULL, NULL},
	{"wr_sectors", FAM_DISK_WR_BYTES, CV_SECT, NULL, NULL},
	{"wr_ticks", FAM_DISK_WR_TIME, CV_MS, NULL, NULL},
	{"in_flight", FAM_DISK_IO_NOW, CV_1, NULL, NULL},
	{"io_ticks", FAM_DISK_IO_TIME, CV_MS, NULL, NULL},
	{"time_in_queue", FAM_DISK_IO_WEIGHTED, CV_MS, NULL, NULL},
	{"dc_ios", FAM_DISK_DC_IOS, CV_1, NULL, NULL},
	{"dc_merges", FAM_DISK_DC_MERGES, CV_1, NULL, NULL},
	{"dc_sectors", FAM_DISK_DC_SECTORS, CV_1, NULL, NULL},
	{"dc_ticks", FAM_DISK_DC_TIME, CV_MS, NULL, NULL},
	{"fl_ios", FAM_DISK_FL_IOS, CV_1, NULL, NULL},
	{"fl_ticks", FAM_DISK_FL_TIME, CV_MS, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

static const struct rule net_rules[] = {
	{"rx_bytes", FAM_NET_RX_BYTES, CV_1, NULL, NULL},
	{"rx_packets", FAM_NET_RX_PACKETS, CV_1, NULL, NULL},
	{"rx_errs", FAM_NET_RX_ERRS, CV_1, NULL, NULL},
	{"rx_drop", FAM_NET_RX_DROP, CV_1, NULL, NULL},
	{"rx_fifo", FAM_NET_RX_FIFO, CV_1, NULL, NULL},
	{"rx_frame", FAM_NET_RX_FRAME, CV_1, NULL, NULL},
	{"rx_compressed", FAM_NET_RX_COMPRESSED, CV_1, NULL, NULL},
	{"rx_multicast", FAM_NET_RX_MULTICAST, CV_1, NULL, NULL},
	{"tx_bytes", FAM_NET_TX_BYTES, CV_1, NULL, NULL},
	{"tx_packets", FAM_NET_TX_PACKETS, CV_1, NULL, NULL},
	{"tx_errs", FAM_NET_TX_ERRS, CV_1, NULL, NULL},
	{"tx_drop", FAM_NET_TX_DROP, CV_1, NULL, NULL},
	{"tx_fifo", FAM_NET_TX_FIFO, CV_1, NULL, NULL},
	{"tx_colls", FAM_NET_TX_COLLS, CV_1, NULL, NULL},
	{"tx_carrier", FAM_NET_TX_CARRIER, CV_1, NULL, NULL},
	{"tx_compressed", FAM_NET_TX_COMPRESSED, CV_1, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

/* perf time columns: [tp_|hw_]time_enabled / time_running -> group */
static const struct rule perf_time_rules[] = {
	{"time_enabled", 0, CV_NS, "group", "sw"},
	{"time_running", 1, CV_NS, "group", "sw"},
	{"tp_time_enabled", 0, CV_NS, "group", "tp"},
	{"tp_time_running", 1, CV_NS, "group", "tp"},
	{"hw_time_enabled", 0, CV_NS, "group", "hw"},
	{"hw_time_running", 1, CV_NS, "group", "hw"},
	{NULL, 0, 0, NULL, NULL},
};

/* a VM's own columns: group, held (read every sources.perf.vm_interval,
 * sources.libvirt.detail_interval or with the slow values: kept between
 * readings), rule */
static const struct vm_rule {
	uint8_t group;
	bool hold;
	struct rule r;
} vm_rules[] = {
	{VMS_G_VM, false, {"state", FAM_DOM_STATE, CV_1, NULL, NULL}},
	{VMS_G_VM, false, {"path", FAM_DOM_PATH, CV_1, NULL, NULL}},
	{VMS_G_VM, false, {"cpu_time", FAM_DOM_CPU, CV_NS, NULL, NULL}},
	{VMS_G_VM, false, {"cpu_user", FAM_DOM_CPU_USER, CV_NS, NULL, NULL}},
	{VMS_G_VM, false, {"cpu_system", FAM_DOM_CPU_SYSTEM, CV_NS, NULL, NULL}},
	{VMS_G_VMIO, false, {"read_bytes", FAM_DOM_IO_READ, CV_1, NULL, NULL}},
	{VMS_G_VMIO, false, {"write_bytes", FAM_DOM_IO_WRITE, CV_1, NULL, NULL}},
	{VMS_G_VMIO, false, {"cg_read_bytes", FAM_DOM_CG_READ, CV_1, NULL, NULL}},
	{VMS_G_VMIO, false, {"cg_write_bytes", FAM_DOM_CG_WRITE, CV_1, NULL, NULL}},
	{VMS_G_VMMEM, false, {"cgroup", FAM_DOM_MEM_CGROUP, CV_1, NULL, NULL}},
	{VMS_G_VMMEM, true, {"rss", FAM_DOM_RSS, CV_1, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"current", FAM_DOM_MEM_CURRENT, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"maximum", FAM_DOM_MEM_MAX, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"swap_in", FAM_DOM_SWAP_IN, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"swap_out", FAM_DOM_SWAP_OUT, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"major_fault", FAM_DOM_MAJOR_FAULT, CV_1, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"minor_fault", FAM_DOM_MINOR_FAULT, CV_1, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"unused", FAM_DOM_UNUSED, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"available", FAM_DOM_AVAILABLE, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"usable", FAM_DOM_USABLE, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"last_update", FAM_DOM_LAST_UPDATE, CV_1, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"disk_caches", FAM_DOM_DISK_CACHES, CV_KIB, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"hugetlb_pgalloc", FAM_DOM_HUGETLB_ALLOC, CV_1, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"hugetlb_pgfail", FAM_DOM_HUGETLB_FAIL, CV_1, NULL, NULL}},
	{VMS_G_VMBALLOON, true, {"rss", FAM_DOM_BALLOON_RSS, CV_KIB, NULL, NULL}},
	{VMS_G_VMLV, true, {"cpu_time", FAM_DOM_LV_CPU, CV_NS, NULL, NULL}},
	{VMS_G_VMLV, true, {"cpu_user", FAM_DOM_LV_CPU_USER, CV_NS, NULL, NULL}},
	{VMS_G_VMLV, true, {"cpu_system", FAM_DOM_LV_CPU_SYSTEM, CV_NS, NULL, NULL}},
	{VMS_G_VM, true, {"slow_t", FAM_DOM_SLOW_T, CV_NS, NULL, NULL}},
	/* the cgroup: limits and throttling every tick, the rest every
	 * sources.libvirt.detail_interval */
	{VMS_G_VMCG, false, {"cpu_quota_us", FAM_CG_CPU_QUOTA, CV_US, NULL, NULL}},
	{VMS_G_VMCG, false, {"cpu_period_us", FAM_CG_CPU_PERIOD, CV_US, NULL, NULL}},
	{VMS_G_VMCG, false, {"cpu_weight", FAM_CG_CPU_WEIGHT, CV_1, NULL, NULL}},
	{VMS_G_VMCG, false, {"cpu_shares", FAM_CG_CPU_SHARES, CV_1, NULL, NULL}},
	{VMS_G_VMCG, false, {"nr_periods", FAM_CG_PERIODS, CV_1, NULL, NULL}},
	{VMS_G_VMCG, false, {"nr_throttled", FAM_CG_THROTTLED_PERIODS, CV_1, NULL, NULL}},
	{VMS_G_VMCG, false, {"throttled", FAM_CG_THROTTLED, CV_NS, NULL, NULL}},
	{VMS_G_VMCG, false, {"mem_max", FAM_CG_MEM_MAX, CV_1, NULL, NULL}},
	{VMS_G_VMCG, false, {"mem_high", FAM_CG_MEM_HIGH, CV_1, NULL, NULL}},
	{VMS_G_VMCG, true, {"ev_high", FAM_CG_MEM_EVENTS, CV_1, "event", "high"}},
	{VMS_G_VMCG, true, {"ev_max", FAM_CG_MEM_EVENTS, CV_1, "event", "max"}},
	{VMS_G_VMCG, true, {"ev_oom", FAM_CG_MEM_EVENTS, CV_1, "event", "oom"}},
	{VMS_G_VMCG, true, {"ev_oom_kill", FAM_CG_MEM_EVENTS, CV_1, "event", "oom_kill"}},
	{VMS_G_VMCG, true, {"anon", FAM_CG_ANON, CV_1, NULL, NULL}},
	{VMS_G_VMCG, true, {"file", FAM_CG_FILE, CV_1, NULL, NULL}},
	{VMS_G_VMCG, true, {"swap", FAM_CG_SWAP, CV_1, NULL, NULL}},
	{VMS_G_VMCG, true, {"pgmajfault", FAM_CG_PGMAJFAULT, CV_1, NULL, NULL}},
	{VMS_G_VMCG, true, {"psi.cpu.some.total", FAM_CG_PSI_CPU_SOME, CV_US, NULL, NULL}},
	{VMS_G_VMCG, true, {"psi.cpu.full.total", FAM_CG_PSI_CPU_FULL, CV_US, NULL, NULL}},
	{VMS_G_VMCG, true, {"psi.memory.some.total", FAM_CG_PSI_MEM_SOME, CV_US, NULL, NULL}},
	{VMS_G_VMCG, true, {"psi.memory.full.total", FAM_CG_PSI_MEM_FULL, CV_US, NULL, NULL}},
	{VMS_G_VMCG, true, {"psi.io.some.total", FAM_CG_PSI_IO_SOME, CV_US, NULL, NULL}},
	{VMS_G_VMCG, true, {"psi.io.full.total", FAM_CG_PSI_IO_FULL, CV_US, NULL, NULL}},
	/* the dirty rate, every sources.libvirt.dirty_rate */
	{VMS_G_VMDIRTY, true, {"calc_status", FAM_DIRTY_STATUS, CV_1, NULL, NULL}},
	{VMS_G_VMDIRTY, true, {"calc_start_time", FAM_DIRTY_START, CV_1, NULL, NULL}},
	{VMS_G_VMDIRTY, true, {"calc_period", FAM_DIRTY_PERIOD, CV_1, NULL, NULL}},
	{VMS_G_VMDIRTY, true, {"megabytes_per_second", FAM_DIRTY_RATE, CV_MIB, NULL, NULL}},
	/* interference (the bpf source): whom the vCPUs waited behind */
	{VMS_G_VMINTF, false, {"wait", FAM_DOM_INTF_WAIT, CV_NS, NULL, NULL}},
	{VMS_G_VMINTF, false, {"vms", FAM_DOM_INTF_BEHIND, CV_NS, "behind", "vms"}},
	{VMS_G_VMINTF, false, {"own", FAM_DOM_INTF_BEHIND, CV_NS, "behind", "own"}},
	{VMS_G_VMINTF, false, {"host", FAM_DOM_INTF_BEHIND, CV_NS, "behind", "host"}},
	{VMS_G_VMINTF, false, {"kernel", FAM_DOM_INTF_BEHIND, CV_NS, "behind", "kernel"}},
	{VMS_G_VMINTF, false, {"unknown", FAM_DOM_INTF_BEHIND, CV_NS, "behind", "unknown"}},
	{VMS_G_VMINTF, false, {"host_other", FAM_DOM_INTF_BY_OTHER_CGROUPS, CV_NS, NULL, NULL}},
	{VMS_G_VMINTF, false, {"irq_est", FAM_DOM_INTF_IRQ_EST, CV_NS, NULL, NULL}},
	/* the same estimated without BPF (the intfest source) */
	{VMS_G_VMINTFEST, false, {"wait", FAM_DOM_INTFEST_WAIT, CV_NS, NULL, NULL}},
	{VMS_G_VMINTFEST, false, {"vms", FAM_DOM_INTFEST_BEHIND, CV_NS, "behind", "vms"}},
	{VMS_G_VMINTFEST, false, {"own", FAM_DOM_INTFEST_BEHIND, CV_NS, "behind", "own"}},
	{VMS_G_VMINTFEST, false, {"host", FAM_DOM_INTFEST_BEHIND, CV_NS, "behind", "host"}},
	{VMS_G_VMINTFEST, false, {"irq", FAM_DOM_INTFEST_BEHIND, CV_NS, "behind", "irq"}},
	{VMS_G_VMINTFEST, false, {"unknown", FAM_DOM_INTFEST_BEHIND, CV_NS, "behind", "unknown"}},
	/* the migration job, every tick while it runs */
	{VMS_G_VMMIG, false, {"job", FAM_MIG_JOB, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"time_elapsed", FAM_MIG_ELAPSED, CV_MS, NULL, NULL}},
	{VMS_G_VMMIG, false, {"time_remaining", FAM_MIG_REMAINING, CV_MS, NULL, NULL}},
	{VMS_G_VMMIG, false, {"setup_time", FAM_MIG_SETUP, CV_MS, NULL, NULL}},
	{VMS_G_VMMIG, false, {"downtime_expected", FAM_MIG_DOWNTIME_EXP, CV_MS, NULL, NULL}},
	{VMS_G_VMMIG, false, {"downtime", FAM_MIG_DOWNTIME, CV_MS, NULL, NULL}},
	{VMS_G_VMMIG, false, {"data_total", FAM_MIG_DATA_TOTAL, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"data_processed", FAM_MIG_DATA_PROCESSED, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"data_remaining", FAM_MIG_DATA_REMAINING, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_total", FAM_MIG_MEM_TOTAL, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_processed", FAM_MIG_MEM_PROCESSED, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_remaining", FAM_MIG_MEM_REMAINING, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_bps", FAM_MIG_MEM_BPS, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_dirty_rate", FAM_MIG_MEM_DIRTY, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_iteration", FAM_MIG_MEM_ITER, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_page_size", FAM_MIG_PAGE_SIZE, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_constant", FAM_MIG_MEM_CONSTANT, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_normal", FAM_MIG_MEM_NORMAL, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_normal_bytes", FAM_MIG_MEM_NORMAL_BYTES, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"memory_postcopy_requests", FAM_MIG_POSTCOPY, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"disk_total", FAM_MIG_DISK_TOTAL, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"disk_processed", FAM_MIG_DISK_PROCESSED, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"disk_remaining", FAM_MIG_DISK_REMAINING, CV_1, NULL, NULL}},
	{VMS_G_VMMIG, false, {"disk_bps", FAM_MIG_DISK_BPS, CV_1, NULL, NULL}},
};

/* ---- name sets ---------------------------------------------------------------
 * vms_mfams[] has the current names: node_exporter 1.9 (collector/
 * pressure_linux.go: node_pressure_irq_stalled_seconds_total; vmstat_linux.go:
 * node_vmstat_KEY, untyped) and the maintained libvirt exporter,
 * inovex/prometheus-libvirt-exporter (pkg/exporter/prometheus-libvirt-
 * exporter.go since its 2023 renames: libvirt_domains, libvirt_domain_info_state
 * {state_desc}, libvirt_domain_block_stats_{read,write,flush}_time_seconds_total,
 * libvirt_domain_memory_stats_disk_caches_bytes, ..._hugetlb_pgalloc_total,
 * ..._last_update_timestamp_seconds, libvirt_domain_job_info_*,
 * libvirt_domain_timed_out).  --names legacy gives vmsampler 1.x's names
 * (node_exporter 1.5, kumina's libvirt exporter) for the families below. */
static const struct {
	uint16_t fam;
	const char *legacy;
} legacy_names[] = {
	{FAM_PSI_IRQ_FULL, "vmsampler_pressure_irq_stalled_seconds"},
	{FAM_DOMAINS, "libvirt_domains_number"},
	{FAM_DOM_STATE, "libvirt_domain_state_code"},
	{FAM_DOM_DISK_CACHES, "libvirt_domain_memory_stats_disk_cache_bytes"},
	{FAM_DOM_BLK_RD_TIME, "libvirt_domain_block_stats_read_seconds"},
	{FAM_DOM_BLK_WR_TIME, "libvirt_domain_block_stats_write_seconds"},
	{FAM_DOM_BLK_FL_TIME, "libvirt_domain_block_stats_flush_seconds"},
	{FAM_DOM_LAST_UPDATE, "vmsampler_domain_memory_stats_last_update_timestamp_seconds"},
	{FAM_DOM_HUGETLB_ALLOC, "vmsampler_domain_memory_stats_hugetlb_pgalloc"},
	{FAM_DOM_HUGETLB_FAIL, "vmsampler_domain_memory_stats_hugetlb_pgfail"},
};

const char *vms_mfam_name(unsigned fam, unsigned names)
{
	if (fam >= FAM_N)
		return "";
	if (names == VMS_NAMES_LEGACY)
		for (size_t i = 0; i < VMS_ARRAY_SIZE(legacy_names); i++)
			if (legacy_names[i].fam == fam)
				return legacy_names[i].legacy;
	return vms_mfams[fam].name;
}

const char *vms_metrics_legacy_name(unsigned i, unsigned *fam)
{
	if (i >= VMS_ARRAY_SIZE(legacy_names))
		return NULL;
	*fam = legacy_names[i].fam;
	return legacy_names[i].legacy;
}

/* libvirt's virDomainState, as the maintained libvirt exporter describes it
 * in state_desc */
static const char *const state_desc[] = {
	"no state",
	"the domain is running",
	"the domain is blocked on resource",
	"the domain is paused by user",
	"the domain is being shut down",
	"the domain is shut off",
	"the domain is crashed",
	"the domain is suspended by guest power management",
};
#define VMS_NSTATES VMS_ARRAY_SIZE(state_desc)

/* ---- exclusions ------------------------------------------------------------ */

const struct vms_mexcl vms_mexcl[] = {
	{VMS_G_MEM, "*", "a /proc/meminfo key node_exporter's meminfo table does not list: its unit (kB or a count) "
			 "is not known, so no family can say it in bytes"},
	{VMS_G_NONE, "*", "a column the catalogue does not know (a later vmsampler's source): nothing says what it is"},
};
const unsigned vms_nmexcl = VMS_ARRAY_SIZE(vms_mexcl);

const struct vms_mexcl *vms_metrics_excluded(const struct vms_colid *id)
{
	for (unsigned i = 0; i < vms_nmexcl; i++)
		if (vms_mexcl[i].group == id->group &&
		    (!strcmp(vms_mexcl[i].field, "*") || !strcmp(vms_mexcl[i].field, id->field)))
			return &vms_mexcl[i];
	return NULL;
}

static const struct rule vcpu_rules[] = {
	{"time", FAM_DOM_VCPU_TIME, CV_NS, NULL, NULL},
	{"delay", FAM_DOM_VCPU_DELAY, CV_NS, NULL, NULL},
	{"slices", FAM_DOM_VCPU_SLICES, CV_1, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

/* a vCPU's placement: read on the detail ticks only, held between */
static const struct rule vcpu_place_rules[] = {
	{"pcpu", FAM_DOM_VCPU_PCPU, CV_1, NULL, NULL},
	{"allowed", FAM_DOM_VCPU_ALLOWED, CV_1, NULL, NULL},
	{"allowed_first", FAM_DOM_VCPU_ALLOWED_FIRST, CV_1, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

static const struct rule lv_vcpu_rules[] = {
	{"time", FAM_DOM_LV_VCPU_TIME, CV_NS, NULL, NULL},
	{"delay", FAM_DOM_LV_VCPU_DELAY, CV_NS, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

static const struct rule vm_net_rules[] = {
	{"rx_bytes", FAM_DOM_NET_RX_BYTES, CV_1, NULL, NULL},
	{"rx_packets", FAM_DOM_NET_RX_PACKETS, CV_1, NULL, NULL},
	{"rx_errs", FAM_DOM_NET_RX_ERRS, CV_1, NULL, NULL},
	{"rx_drop", FAM_DOM_NET_RX_DROP, CV_1, NULL, NULL},
	{"tx_bytes", FAM_DOM_NET_TX_BYTES, CV_1, NULL, NULL},
	{"tx_packets", FAM_DOM_NET_TX_PACKETS, CV_1, NULL, NULL},
	{"tx_errs", FAM_DOM_NET_TX_ERRS, CV_1, NULL, NULL},
	{"tx_drop", FAM_DOM_NET_TX_DROP, CV_1, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

static const struct rule vm_block_rules[] = {
	{"rd_reqs", FAM_DOM_BLK_RD_REQS, CV_1, NULL, NULL},
	{"rd_bytes", FAM_DOM_BLK_RD_BYTES, CV_1, NULL, NULL},
	{"rd_times", FAM_DOM_BLK_RD_TIME, CV_NS, NULL, NULL},
	{"wr_reqs", FAM_DOM_BLK_WR_REQS, CV_1, NULL, NULL},
	{"wr_bytes", FAM_DOM_BLK_WR_BYTES, CV_1, NULL, NULL},
	{"wr_times", FAM_DOM_BLK_WR_TIME, CV_NS, NULL, NULL},
	{"fl_reqs", FAM_DOM_BLK_FL_REQS, CV_1, NULL, NULL},
	{"fl_times", FAM_DOM_BLK_FL_TIME, CV_NS, NULL, NULL},
	{"allocation", FAM_DOM_BLK_ALLOC, CV_1, NULL, NULL},
	{"capacity", FAM_DOM_BLK_CAPACITY, CV_1, NULL, NULL},
	{"physical", FAM_DOM_BLK_PHYSICAL, CV_1, NULL, NULL},
	{NULL, 0, 0, NULL, NULL},
};

/* a VM's columns of a sub-entity: group, held, rules, the sub's label */
static const struct {
	uint8_t group;
	bool hold;
	const struct rule *rules;
	const char *label;
} vm_sub_rules[] = {
	{VMS_G_VCPU, false, vcpu_rules, "vcpu"},
	{VMS_G_VCPU, true, vcpu_place_rules, "vcpu"},
	{VMS_G_VMLVVCPU, true, lv_vcpu_rules, "vcpu"},
	{VMS_G_VMNET, false, vm_net_rules, "target_device"},
	{VMS_G_VMBLOCK, true, vm_block_rules, "target_device"},
};

/* a VM's interference culprits, one column each (an open group: the
 * field is the culprit's name): group, family, the culprit's label */
static const struct {
	uint8_t group;
	uint16_t fam;
	const char *label;
} vm_culprit_rules[] = {
	{VMS_G_VMINTFBY, FAM_DOM_INTF_BY, "other"},
	{VMS_G_VMINTFHOST, FAM_DOM_INTF_BY_CGROUP, "cgroup"},
	{VMS_G_VMINTFESTBY, FAM_DOM_INTFEST_BY, "other"},
};

static const struct rule *find_rule(const struct rule *r, const char *field, size_t len)
{
	for (; r->field; r++)
		if (strlen(r->field) == len && memcmp(r->field, field, len) == 0)
			return r;
	return NULL;
}

/* ---- labels --------------------------------------------------------------- */

struct lbuf {
	char b[1024];
	size_t n;
	bool full;
};

/* name="value", the value escaped as both formats want (\\, \", \n) */
static void label(struct lbuf *l, const char *name, const char *v, size_t vlen)
{
	if (l->full)
		return;
	char *p = l->b + l->n, *end = l->b + sizeof(l->b) - 4;
	if (l->n) {
		if (p >= end)
			goto full;
		*p++ = ',';
	}
	size_t nl = strlen(name);
	if (p + nl + 2 >= end)
		goto full;
	memcpy(p, name, nl);
	p += nl;
	*p++ = '=';
	*p++ = '"';
	for (size_t i = 0; i < vlen; i++) {
		char c = v[i];
		if (p + 2 >= end)
			goto full;
		if (c == '\\' || c == '"') {
			*p++ = '\\';
			*p++ = c;
		} else if (c == '\n') {
			*p++ = '\\';
			*p++ = 'n';
		} else {
			*p++ = c;
		}
	}
	if (p + 1 >= end)
		goto full;
	*p++ = '"';
	*p = '\0';
	l->n = (size_t)(p - l->b);
	return;
full:
	l->full = true;
}

static void label_z(struct lbuf *l, const char *name, const char *v)
{
	label(l, name, v, strlen(v));
}

/* ---- mapping -------------------------------------------------------------- */

static int set(struct vms_mcol *o, const struct rule *r, int fam, int scale, double user_hz,
	       struct lbuf *l)
{
	if (r->lname)
		label_z(l, r->lname, r->lval);
	if (l->full)
		return 0; /* a label longer than any real one: left out */
	o->fam = (uint16_t)fam;
	o->mul = 1;
	o->div = 1;
	for (int i = 0; i < scale; i++)
		o->div *= 10;
	switch (r->conv) {
	case CV_HZ:
		o->div *= user_hz;
		break;
	case CV_MS:
		o->div *= 1e3;
		break;
	case CV_US:
		o->div *= 1e6;
		break;
	case CV_NS:
		o->div *= 1e9;
		break;
	case CV_SECT:
		o->mul = 512;
		break;
	case CV_KIB:
		o->mul = 1024;
		break;
	case CV_MIB:
		o->mul = 1048576;
		break;
	}
	o->labels = strdup(l->b);
	return o->labels ? 1 : -ENOMEM;
}

static int map_perf(const char *field, struct lbuf *l, int fam_ev, int fam_en, int fam_run, int scale,
		    double user_hz, struct vms_mcol *out)
{
	const struct rule *r = find_rule(perf_time_rules, field, strlen(field));
	if (r)
		return set(out, r, r->fam == 0 ? fam_en : fam_run, scale, user_hz, l);
	static const struct rule ev = {"", 0, CV_1, NULL, NULL};
	label_z(l, "event", field);
	return set(out, &ev, fam_ev, scale, user_hz, l);
}

/* A VM's column (group g of a VM). */
static int map_vm(const struct vms_colid *id, const char *key, int scale, double user_hz, unsigned names,
		  struct vms_mcol *out)
{
	struct lbuf l = {.n = 0};
	const struct rule *r = NULL;
	bool hold = false;
	int k;

	label_z(&l, "domain", id->entity);
	label_z(&l, "uuid", key ? key : "");
	for (size_t i = 0; i < VMS_ARRAY_SIZE(vm_culprit_rules); i++)
		if (vm_culprit_rules[i].group == id->group) {
			/* the field is the culprit's name: another VM's, a cgroup's path */
			const struct rule by = {"", vm_culprit_rules[i].fam, CV_NS, NULL, NULL};
			label_z(&l, vm_culprit_rules[i].label, id->field);
			return set(out, &by, by.fam, scale, user_hz, &l);
		}
	switch (id->group) {
	case VMS_G_VMPERF:
		/* read every sources.perf.vm_interval: held between */
		k = map_perf(id->field, &l, FAM_DOM_PERF_EVENTS, FAM_DOM_PERF_ENABLED, FAM_DOM_PERF_RUNNING, scale,
			     user_hz, out);
		for (int j = 0; j < k; j++)
			out[j].hold = true;
		return k;
	default:
		for (size_t i = 0; i < VMS_ARRAY_SIZE(vm_sub_rules) && !r; i++)
			if (vm_sub_rules[i].group == id->group &&
			    (r = find_rule(vm_sub_rules[i].rules, id->field, strlen(id->field)))) {
				hold = vm_sub_rules[i].hold;
				label_z(&l, vm_sub_rules[i].label, id->sub);
			}
		for (size_t i = 0; i < VMS_ARRAY_SIZE(vm_rules); i++)
			if (vm_rules[i].group == id->group && strcmp(vm_rules[i].r.field, id->field) == 0) {
				r = &vm_rules[i].r;
				hold = vm_rules[i].hold;
			}
	}
	if (!r)
		return 0;
	if (r->fam == FAM_DOM_STATE && names == VMS_NAMES_CURRENT) {
		/* one series per state, present while the VM is in it */
		size_t n0 = l.n;
		for (unsigned st = 0; st < VMS_NSTATES; st++) {
			struct rule sr = *r;
			sr.lname = "state_desc";
			sr.lval = state_desc[st];
			l.n = n0;
			l.b[n0] = '\0';
			memset(&out[st], 0, sizeof(out[st]));
			k = set(&out[st], &sr, r->fam, scale, user_hz, &l);
			if (k <= 0) {
				for (unsigned j = 0; j < st; j++)
					free(out[j].labels);
				return k;
			}
			out[st].match = true;
			out[st].hold = hold;
			out[st].want = (uint8_t)st;
		}
		return (int)VMS_NSTATES;
	}
	k = set(out, r, r->fam, scale, user_hz, &l);
	if (k <= 0)
		return k;
	out->hold = hold;
	if (r->fam != FAM_DOM_SLOW_T)
		return 1;
	/* and its age at the frame's time, and whether it timed out */
	for (int j = 1; j <= 2; j++) {
		out[j] = out[0];
		out[j].fam = j == 1 ? FAM_DOM_SLOW_AGE : FAM_DOM_TIMED_OUT;
		out[j].age = j == 1;
		out[j].timedout = j == 2;
		out[j].labels = strdup(out->labels);
		if (!out[j].labels) {
			for (int i = 0; i < j; i++)
				free(out[i].labels);
			return -ENOMEM;
		}
	}
	return 3;
}

/* node_exporter's vector label of node_softirqs_total (procfs' SoftIRQStat,
 * collector/stat_linux.go): /proc/softirqs' name in lower case, IRQ_POLL as
 * block_iopoll (its older name) */
static const char *softirq_vector(const char *name)
{
	static const char *const map[][2] = {
		{"HI", "hi"},         {"TIMER", "timer"},     {"NET_TX", "net_tx"},   {"NET_RX", "net_rx"},
		{"BLOCK", "block"},   {"IRQ_POLL", "block_iopoll"}, {"TASKLET", "tasklet"}, {"SCHED", "sched"},
		{"HRTIMER", "hrtimer"}, {"RCU", "rcu"},
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(map); i++)
		if (!strcmp(name, map[i][0]))
			return map[i][1];
	return name;
}

/* vmstat.KEY: node_vmstat_KEY, a key that makes a valid metric name */
static int map_vmstat(const struct vms_colid *id, int scale, double user_hz, struct vms_mcol *out)
{
	static const struct rule vs = {"", 0, CV_1, NULL, NULL};
	struct lbuf l = {.n = 0};
	const char *f = id->field;
	size_t n = strlen(f);
	if (!n || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((f[i] >= 'a' && f[i] <= 'z') || (f[i] >= 'A' && f[i] <= 'Z') || f[i] == '_' ||
		      (i && f[i] >= '0' && f[i] <= '9')))
			return 0;
	int k = set(out, &vs, FAM_NODE_VMSTAT, scale, user_hz, &l);
	if (k <= 0)
		return k;
	if (asprintf(&out->name, "node_vmstat_%s", f) < 0) {
		out->name = NULL;
		free(out->labels);
		out->labels = NULL;
		return -ENOMEM;
	}
	return 1;
}

/* mem.FIELD: the node_memory_ family of that /proc/meminfo field
 * (node_memory_FIELD_bytes, or node_memory_FIELD for the HugePages_
 * counts), -1 for a field the table does not have */
static int mem_family(const char *field)
{
	char want[96];
	for (int pass = 0; pass < 2; pass++) {
		int n = snprintf(want, sizeof(want), pass ? "node_memory_%s" : "node_memory_%s_bytes", field);
		if (n < 0 || (size_t)n >= sizeof(want))
			return -1;
		for (int i = FAM_NODE_MEM_MemTotal; i <= FAM_NODE_MEM_HugePages_Surp; i++)
			if (strcmp(vms_mfams[i].name, want) == 0)
				return i;
	}
	return -1;
}

int vms_metrics_map(const struct vms_colid *id, const char *key, int scale, double user_hz, unsigned names,
		    struct vms_mcol *out)
{
	struct lbuf l = {.n = 0};
	const struct rule *r;
	const char *e = id->entity;

	memset(out, 0, sizeof(*out));
	if (scale < 0 || scale > 19 || !(user_hz > 0) || !id->field[0])
		return 0;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(host_rules); i++)
		if (host_rules[i].group == id->group && strcmp(host_rules[i].ent, e) == 0 &&
		    strcmp(host_rules[i].r.field, id->field) == 0)
			return set(out, &host_rules[i].r, host_rules[i].r.fam, scale, user_hz, &l);
	switch (id->group) {
	case VMS_G_VMSTAT:
		return map_vmstat(id, scale, user_hz, out);
	case VMS_G_SOFTIRQ:
	case VMS_G_INTR: {
		static const struct rule one = {"", 0, CV_1, NULL, NULL};
		bool all = strcmp(e, "all") == 0, soft = id->group == VMS_G_SOFTIRQ;
		if (!all && !vms_all_digits(e, strlen(e)))
			return 0;
		if (!all)
			label_z(&l, "cpu", e);
		if (soft && all) {
			label_z(&l, "vector", softirq_vector(id->field));
			return set(out, &one, FAM_NODE_SOFTIRQS, scale, user_hz, &l);
		}
		label_z(&l, "type", id->field);
		return set(out, &one, soft ? FAM_NODE_SOFTIRQS_CPU : all ? FAM_INTR_ALL : FAM_INTR_CPU, scale, user_hz, &l);
	}
	case VMS_G_SCHED:
	case VMS_G_RQ:
		if (!(r = find_rule(id->group == VMS_G_SCHED ? sched_rules : rq_rules, id->field, strlen(id->field))) ||
		    !vms_all_digits(e, strlen(e)))
			return 0;
		label_z(&l, "cpu", e);
		return set(out, r, r->fam, scale, user_hz, &l);
	case VMS_G_MEM: {
		static const struct rule mem = {"", 0, CV_1, NULL, NULL};
		int fam = mem_family(id->field);
		return fam < 0 ? 0 : set(out, &mem, fam, scale, user_hz, &l);
	}
	case VMS_G_CPU:
		if (!(r = find_rule(cpu_rules, id->field, strlen(id->field))))
			return 0;
		if (strcmp(e, "all") == 0) {
			/* every field as its /proc/stat name */
			struct rule all = {id->field, FAM_CPU_ALL, CV_HZ, "mode", id->field};
			return set(out, &all, FAM_CPU_ALL, scale, user_hz, &l);
		}
		if (!vms_all_digits(e, strlen(e)))
			return 0;
		label_z(&l, "cpu", e);
		return set(out, r, r->fam, scale, user_hz, &l);
	case VMS_G_DISK:
	case VMS_G_NET:
		r = find_rule(id->group == VMS_G_DISK ? disk_rules : net_rules, id->field, strlen(id->field));
		if (!r)
			return 0;
		label_z(&l, "device", e);
		return set(out, r, r->fam, scale, user_hz, &l);
	case VMS_G_PERF:
		if (strcmp(e, "all") == 0)
			return map_perf(id->field, &l, FAM_PERF_ALL_EVENTS, FAM_PERF_ALL_ENABLED, FAM_PERF_ALL_RUNNING,
					scale, user_hz, out);
		/* the perf source's per-CPU entities are "cpuN" */
		if (strncmp(e, "cpu", 3) != 0 || !vms_all_digits(e + 3, strlen(e) - 3))
			return 0;
		label_z(&l, "cpu", e + 3);
		return map_perf(id->field, &l, FAM_PERF_EVENTS, FAM_PERF_ENABLED, FAM_PERF_RUNNING, scale, user_hz,
				out);
	}
	if ((id->group >= VMS_G_VM && id->group <= VMS_G_VMPERF) ||
	    (id->group >= VMS_G_VMINTF && id->group <= VMS_G_VMINTFESTBY))
		return map_vm(id, key, scale, user_hz, names, out);
	return 0;
}

/* ---- a schema's samples ----------------------------------------------------- */

static const uint16_t meta_fam[VMS_MMETA_N] = {
	[VMS_MMETA_TIME] = FAM_FRAME_TIME,       [VMS_MMETA_SEQ] = FAM_FRAME_SEQ,
	[VMS_MMETA_GEN] = FAM_FRAME_GEN,         [VMS_MMETA_LATE] = FAM_TICK_LATE,
	[VMS_MMETA_MISSED] = FAM_MISSED_TICKS,   [VMS_MMETA_LOST] = FAM_LOST_FRAMES,
	[VMS_MMETA_SELF_CPU] = FAM_SELF_CPU,     [VMS_MMETA_INTERVAL] = FAM_INTERVAL,
	[VMS_MMETA_READ] = FAM_EXPORT_READ,      [VMS_MMETA_RMISSED] = FAM_EXPORT_MISSED,
	[VMS_MMETA_UNMAPPED] = FAM_EXPORT_UNMAPPED,  [VMS_MMETA_FILTERED] = FAM_EXPORT_FILTERED,
	[VMS_MMETA_SOURCE_UP] = FAM_EXPORT_UP,   [VMS_MMETA_FRAME_AGE] = FAM_EXPORT_AGE,
	[VMS_MMETA_HOST_INFO] = FAM_HOST_INFO,
	[VMS_MMETA_RW_FRAMES] = FAM_RW_FRAMES,   [VMS_MMETA_RW_SAMPLES] = FAM_RW_SAMPLES,
	[VMS_MMETA_RW_STALE] = FAM_RW_STALE,     [VMS_MMETA_RW_BATCHES] = FAM_RW_BATCHES,
	[VMS_MMETA_RW_RETRIES] = FAM_RW_RETRIES, [VMS_MMETA_RW_FAILURES] = FAM_RW_FAILURES,
	[VMS_MMETA_RW_DROPPED] = FAM_RW_DROPPED, [VMS_MMETA_RW_BYTES] = FAM_RW_BYTES,
	[VMS_MMETA_RW_LOST] = FAM_RW_LOST,
};

static int by_family(const void *a, const void *b)
{
	const struct vms_mcol *x = a, *y = b;
	if (x->fam != y->fam)
		return x->fam < y->fam ? -1 : 1;
	int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
	if (c)
		return c;
	return x->col < y->col ? -1 : x->col > y->col;
}

const char *vms_mcol_name(const struct vms_metrics *m, const struct vms_mcol *s)
{
	return s->name ? s->name : vms_mfam_name(s->fam, m->names);
}

bool vms_mfam_glob_ok(const char *glob)
{
	if (!glob || !*glob)
		return false;
	for (const char *p = glob; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("_:*?[]!-", *p)))
			return false;
	return true;
}

/* Does glob g name the family called name (type t)? */
static bool glob_fam(const char *g, const char *name, uint8_t t)
{
	if (fnmatch(g, name, 0) == 0)
		return true;
	if (t != VMS_MT_COUNTER)
		return false;
	char full[160];
	snprintf(full, sizeof(full), "%s_total", name);
	return fnmatch(g, full, 0) == 0;
}

/* Is sample s of m kept by the options? */
static bool kept(const struct vms_metrics *m, const struct vms_mcol *s, const struct vms_mopts *o)
{
	if (!o)
		return true;
	const char *name = vms_mcol_name(m, s);
	uint8_t t = vms_mfams[s->fam].type;
	if (o->ninclude) {
		bool in = false;
		for (unsigned i = 0; i < o->ninclude && !in; i++)
			in = glob_fam(o->include[i], name, t);
		if (!in)
			return false;
	}
	for (unsigned i = 0; i < o->nexclude; i++)
		if (glob_fam(o->exclude[i], name, t))
			return false;
	return true;
}

void vms_metrics_free(struct vms_metrics *m)
{
	for (uint32_t i = 0; i < m->nm; i++) {
		free(m->m[i].labels);
		free(m->m[i].name);
		free(m->m[i].fold);
	}
	free(m->m);
	memset(m, 0, sizeof(*m));
}

/* vmsampler_host_info's labels: every pair of the input's HOST record
 * whose key is a label name (a pair that does not fit is left out). */
static char *host_labels(const struct vms_reader *r)
{
	struct lbuf l = {.n = 0};
	l.b[0] = '\0';
	const char *k, *v;
	for (uint32_t i = 0; vms_reader_host_pair(r, i, &k, &v) == 0; i++) {
		if (!vms_mname_ok(k, false) || !strncmp(k, "__", 2) || !*v)
			continue;
		size_t was = l.n;
		label_z(&l, k, v);
		if (l.full) {
			l.full = false;
			l.n = was;
			l.b[was] = '\0';
		}
	}
	return strdup(l.b);
}

int vms_metrics_copy(struct vms_metrics *dst, const struct vms_metrics *src)
{
	*dst = *src;
	dst->nm = 0;
	dst->m = malloc((size_t)(src->nm ? src->nm : 1) * sizeof(*dst->m));
	if (!dst->m)
		return -ENOMEM;
	for (uint32_t k = 0; k < src->nm; k++) {
		struct vms_mcol *o = &dst->m[k];
		*o = src->m[k];
		o->labels = strdup(src->m[k].labels);
		o->name = src->m[k].name ? strdup(src->m[k].name) : NULL;
		o->fold = src->m[k].nfold ? malloc(src->m[k].nfold * sizeof(*o->fold)) : NULL;
		if (o->fold)
			memcpy(o->fold, src->m[k].fold, src->m[k].nfold * sizeof(*o->fold));
		if (!o->labels || (src->m[k].name && !o->name) || (src->m[k].nfold && !o->fold)) {
			free(o->labels);
			free(o->name);
			free(o->fold);
			return -ENOMEM;
		}
		dst->nm = k + 1;
	}
	return 0;
}

/* The current frame's value of column col for ranking (a missing one
 * ranks last). */
static uint64_t rank_value(const struct vms_frame *f, uint32_t col)
{
	return f && col < f->ncols && f->v[col] != VMS_NONE ? f->v[col] : 0;
}

static const struct vms_frame *rank_frame;

static int by_rank(const void *a, const void *b)
{
	const struct vms_mcol *x = a, *y = b;
	uint64_t u = rank_value(rank_frame, x->col), v = rank_value(rank_frame, y->col);
	if (u != v)
		return u > v ? -1 : 1;
	return strcmp(x->labels, y->labels);
}

/* The families whose series are a domain's culprit VMs (by), ranked, the
 * top N kept, the rest summed into one bucket sample of the domain: the
 * interference program's and the estimate's. */
static const struct {
	uint16_t by, bucket;
} intf_folds[] = {
	{FAM_DOM_INTF_BY, FAM_DOM_INTF_BY_OTHER},
	{FAM_DOM_INTFEST_BY, FAM_DOM_INTFEST_BY_OTHER},
};

static bool intf_bucket(uint16_t fam)
{
	for (size_t i = 0; i < VMS_ARRAY_SIZE(intf_folds); i++)
		if (intf_folds[i].bucket == fam)
			return true;
	return false;
}

/* The samples of family fam in m, sorted by family: [*first, *end) */
static void fam_range(const struct vms_metrics *m, uint16_t fam, uint32_t *first, uint32_t *end)
{
	uint32_t a = 0, b;
	while (a < m->nm && m->m[a].fam != fam)
		a++;
	for (b = a; b < m->nm && m->m[b].fam == fam; b++)
		;
	*first = a;
	*end = b;
}

/* Each domain's culprit VMs of family fold.by beyond its top `top` (by
 * their counters in the reader's current frame) become one bucket sample
 * of family fold.bucket (metrics.h); the domains are numbered on from
 * *grp. */
static int fold_one(struct vms_metrics *m, const struct vms_reader *r, const struct vms_mopts *opts, unsigned top,
		    size_t fold, uint32_t *grpp)
{
	/* the by-VM samples, grouped by domain (the column's entity) */
	uint32_t first, end;
	fam_range(m, intf_folds[fold].by, &first, &end);
	if (end == first)
		return 0;
	/* (the samples are in column order, and a domain's pairs are
	 * contiguous columns: one run per domain) */
	rank_frame = vms_reader_frame(r);
	uint32_t w = first; /* where the kept ones go */
	uint32_t grp = *grpp;
	struct vms_mcol *bucket = calloc(end - first, sizeof(*bucket));
	uint32_t nb = 0;
	int err = 0;
	if (!bucket)
		return -ENOMEM;
	for (uint32_t i = first; i < end;) {
		struct vms_reader_colid a, b;
		uint32_t j = i + 1;
		if (vms_reader_col_id(r, m->m[i].col, &a) < 0)
			a.entity = "";
		while (j < end && vms_reader_col_id(r, m->m[j].col, &b) == 0 && strcmp(a.entity, b.entity) == 0)
			j++;
		uint32_t n = j - i;
		qsort(&m->m[i], n, sizeof(*m->m), by_rank);
		uint32_t keep = n < top ? n : top;
		grp++;
		for (uint32_t k = 0; k < n; k++)
			m->m[i + k].grp = grp;
		for (uint32_t k = 0; k < keep; k++)
			m->m[w++] = m->m[i + k];
		if (keep < n) {
			struct vms_mcol *o = &bucket[nb];
			struct vms_reader_col c;
			struct lbuf l = {.n = 0};
			l.b[0] = '\0';
			*o = m->m[i + keep];
			o->fam = intf_folds[fold].bucket;
			o->name = NULL;
			o->nfold = n - keep - 1;
			o->fold = o->nfold ? malloc(o->nfold * sizeof(*o->fold)) : NULL;
			label_z(&l, "domain", a.entity);
			label_z(&l, "uuid", vms_reader_col_info(r, o->col, &c) == 0 ? c.key : "");
			o->labels = strdup(l.b);
			for (uint32_t k = 0; k < o->nfold && o->fold; k++)
				o->fold[k] = m->m[i + keep + 1 + k].col;
			bool ok = o->labels && (!o->nfold || o->fold);
			if (!ok)
				err = -ENOMEM;
			if (ok && kept(m, o, opts)) {
				nb++;
			} else {
				m->filtered += ok;
				free(o->labels);
				free(o->fold);
				memset(o, 0, sizeof(*o));
			}
			for (uint32_t k = keep; k < n; k++) {
				free(m->m[i + k].labels);
				free(m->m[i + k].name);
			}
		}
		i = j;
	}
	/* close the gap, then the buckets at the end (build sorts by family) */
	memmove(&m->m[w], &m->m[end], (m->nm - end) * sizeof(*m->m));
	m->nm -= end - w;
	memcpy(&m->m[m->nm], bucket, nb * sizeof(*bucket));
	m->nm += nb;
	free(bucket);
	*grpp = grp;
	return err;
}

static int fold_intf(struct vms_metrics *m, const struct vms_reader *r, const struct vms_mopts *opts)
{
	unsigned top = opts && opts->intf_top_set ? opts->intf_top : VMS_INTF_TOP_DEFAULT;
	uint32_t grp = 0;
	int err = 0;
	/* (each leaves the other's samples contiguous: it moves its own
	 * range's rest as one block and puts its buckets at the end) */
	for (size_t i = 0; i < VMS_ARRAY_SIZE(intf_folds) && !err; i++)
		err = fold_one(m, r, opts, top, i, &grp);
	return err;
}

int vms_metrics_build(struct vms_metrics *m, const struct vms_reader *r, double user_hz,
		      const struct vms_mopts *opts)
{
	uint32_t n = vms_reader_ncols(r);
	memset(m, 0, sizeof(*m));
	m->m = calloc((size_t)n * VMS_MMAP_MAX + VMS_MMETA_N, sizeof(*m->m));
	if (!m->m)
		return -ENOMEM;
	m->ncols = n;
	m->names = opts ? opts->names : VMS_NAMES_CURRENT;
	for (uint32_t i = 0; i < n; i++) {
		struct vms_reader_col c;
		struct vms_reader_colid ci;
		if (vms_reader_col_info(r, i, &c) < 0 || vms_reader_col_id(r, i, &ci) < 0)
			continue;
		unsigned g = vms_catalog_group(ci.group, strlen(ci.group));
		const struct vms_colid id = {(uint8_t)g, (uint16_t)vms_catalog_field(g, ci.field), ci.entity, ci.sub,
					     ci.field};
		int k = vms_metrics_map(&id, c.key, c.scale, user_hz, m->names, &m->m[m->nm]);
		if (k < 0) {
			vms_metrics_free(m);
			return k;
		}
		if (k == 0)
			m->unmapped++;
		/* --no-per-cpu: the CPUs' own series go, cpu.all's stay */
		bool per_cpu = opts && opts->no_per_cpu &&
			       (g == VMS_G_CPU || g == VMS_G_PERF || g == VMS_G_INTR || g == VMS_G_SOFTIRQ) &&
			       strcmp(ci.entity, "all") != 0;
		uint32_t keep = m->nm;
		for (int j = 0; j < k; j++) {
			struct vms_mcol *o = &m->m[m->nm + (uint32_t)j];
			o->col = i;
			if (per_cpu || !kept(m, o, opts)) {
				m->filtered++;
				free(o->labels);
				free(o->name);
				memset(o, 0, sizeof(*o));
				continue;
			}
			if (o != &m->m[keep]) {
				m->m[keep] = *o;
				memset(o, 0, sizeof(*o));
			}
			keep++;
		}
		m->nm = keep;
	}
	for (unsigned k = 0; k < VMS_MMETA_N; k++) {
		struct vms_mcol *o = &m->m[m->nm];
		o->col = VMS_MCOL_META | k;
		o->fam = meta_fam[k];
		if (!kept(m, o, opts)) {
			memset(o, 0, sizeof(*o));
			continue;
		}
		o->mul = 1;
		o->div = (k == VMS_MMETA_TIME || k == VMS_MMETA_LATE || k == VMS_MMETA_SELF_CPU ||
			  k == VMS_MMETA_INTERVAL || k == VMS_MMETA_FRAME_AGE) ? 1e9 : 1;
		o->labels = k == VMS_MMETA_HOST_INFO ? host_labels(r) : strdup("");
		if (!o->labels) {
			vms_metrics_free(m);
			return -ENOMEM;
		}
		m->nm++;
	}
	qsort(m->m, m->nm, sizeof(*m->m), by_family);
	int e = fold_intf(m, r, opts);
	if (e < 0) {
		vms_metrics_free(m);
		return e;
	}
	qsort(m->m, m->nm, sizeof(*m->m), by_family);
	return 0;
}

/* ---- following a stream ---------------------------------------------------- */

void vms_mstate_init(struct vms_mstate *st, double user_hz)
{
	memset(st, 0, sizeof(*st));
	st->user_hz = user_hz;
	for (unsigned k = VMS_MMETA_RW_FRAMES; k < VMS_MMETA_N; k++)
		st->meta[k] = VMS_NONE; /* only export --remote-write has them */
	st->meta[VMS_MMETA_SOURCE_UP] = st->meta[VMS_MMETA_FRAME_AGE] = VMS_NONE; /* export's scrapes */
}

void vms_mstate_free(struct vms_mstate *st)
{
	if (st->hname)
		for (uint32_t i = 0; i < st->ncols; i++)
			free(st->hname[i]);
	free(st->hname);
	free(st->cur);
	free(st->hold);
	vms_metrics_free(&st->m);
	st->hname = NULL;
	st->cur = NULL;
	st->hold = NULL;
	st->ncols = 0;
	st->fresh = false;
}

/* The buckets of m (just built for the reader's frame) go on from the
 * values the old ones of the same labels had at the last frame (st->cur,
 * st->m): their offset makes up for the counters that left them. */
static void carry_buckets(const struct vms_mstate *st, struct vms_metrics *m, const struct vms_reader *r)
{
	const struct vms_frame *f = vms_reader_frame(r);
	for (uint32_t k = 0; k < m->nm && st->cur; k++) {
		struct vms_mcol *b = &m->m[k];
		if (!intf_bucket(b->fam))
			continue;
		const struct vms_mcol *o = NULL;
		for (uint32_t i = 0; i < st->m.nm && !o; i++)
			if (st->m.m[i].fam == b->fam && strcmp(st->m.m[i].labels, b->labels) == 0)
				o = &st->m.m[i];
		if (!o || !f)
			continue;
		/* the old bucket's raw value at the last frame, and the new one's now */
		uint64_t was = o->foff, now = 0;
		bool ok = o->col < st->ncols && st->cur[o->col] != VMS_NONE;
		if (ok)
			was += st->cur[o->col];
		for (uint32_t i = 0; ok && i < o->nfold; i++) {
			ok = o->fold[i] < st->ncols && st->cur[o->fold[i]] != VMS_NONE;
			was += ok ? st->cur[o->fold[i]] : 0;
		}
		ok = ok && b->col < f->ncols && f->v[b->col] != VMS_NONE;
		now = ok ? f->v[b->col] : 0;
		for (uint32_t i = 0; ok && i < b->nfold; i++) {
			ok = b->fold[i] < f->ncols && f->v[b->fold[i]] != VMS_NONE;
			now += ok ? f->v[b->fold[i]] : 0;
		}
		if (ok && was > now)
			b->foff = was - now;
	}
}

/* Does a culprit in a domain's bucket (family bucket) now pass the
 * smallest of its top N (family by) by more than 1/8 at frame f? */
static bool fold_rerank(const struct vms_metrics *m, const struct vms_frame *f, uint16_t by, uint16_t bucket)
{
	uint32_t first, end;
	fam_range(m, by, &first, &end);
	for (uint32_t k = 0; k < m->nm; k++) {
		const struct vms_mcol *b = &m->m[k];
		if (b->fam != bucket)
			continue;
		uint64_t top = 0; /* the largest culprit in the bucket */
		for (uint32_t x = 0; x <= b->nfold; x++) {
			uint32_t c = x ? b->fold[x - 1] : b->col;
			if (c < f->ncols && f->v[c] != VMS_NONE && f->v[c] > top)
				top = f->v[c];
		}
		for (uint32_t i = first; i < end; i++) {
			const struct vms_mcol *s = &m->m[i];
			if (s->grp != b->grp || s->col >= f->ncols || f->v[s->col] == VMS_NONE)
				continue;
			if (top > f->v[s->col] + f->v[s->col] / 8)
				return true;
		}
	}
	return false;
}

/* Should the interference ranking be made again at frame f? */
static bool intf_rerank(const struct vms_metrics *m, const struct vms_frame *f)
{
	for (size_t i = 0; i < VMS_ARRAY_SIZE(intf_folds); i++)
		if (fold_rerank(m, f, intf_folds[i].by, intf_folds[i].bucket))
			return true;
	return false;
}

/* A new schema: its samples, and the held values carried over by name. */
static int new_schema(struct vms_mstate *st, const struct vms_reader *r)
{
	struct vms_metrics m;
	int e = vms_metrics_build(&m, r, st->user_hz, &st->opts);
	if (e < 0)
		return e;
	uint32_t n = m.ncols, alloc = n ? n : 1;
	uint64_t *cur = malloc((size_t)alloc * sizeof(*cur));
	bool *hold = calloc(alloc, sizeof(*hold));
	char **hname = calloc(alloc, sizeof(*hname));
	if (!cur || !hold || !hname) {
		free(cur);
		free(hold);
		free(hname);
		vms_metrics_free(&m);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		cur[i] = VMS_NONE;
	for (uint32_t k = 0; k < m.nm; k++)
		if (m.m[k].hold && !(m.m[k].col & VMS_MCOL_META))
			hold[m.m[k].col] = true;
	for (uint32_t i = 0; i < n; i++) {
		struct vms_reader_col c;
		if (!hold[i] || vms_reader_col_info(r, i, &c) < 0)
			continue;
		hname[i] = strdup(c.name);
		if (!hname[i])
			continue; /* not carried: shown again at its next refresh */
		/* the same column in the old schema: most often near the same index */
		for (uint32_t j = 0; j < st->ncols; j++) {
			uint32_t o = (i + j) % st->ncols;
			if (st->hname[o] && strcmp(st->hname[o], c.name) == 0) {
				cur[i] = st->cur[o];
				break;
			}
		}
	}
	carry_buckets(st, &m, r);
	vms_mstate_free(st);
	st->m = m;
	st->fresh = true;
	st->cur = cur;
	st->hold = hold;
	st->hname = hname;
	st->ncols = n;
	return 0;
}

int vms_mstate_take(struct vms_mstate *st, const struct vms_reader *r)
{
	if (vms_reader_schema_changed(r) || !st->cur || intf_rerank(&st->m, vms_reader_frame(r))) {
		int e = new_schema(st, r);
		if (e < 0)
			return e;
	}
	const struct vms_frame *f = vms_reader_frame(r);
	uint32_t n = f->ncols < st->ncols ? f->ncols : st->ncols;
	for (uint32_t i = 0; i < n; i++)
		if (!st->hold[i] || f->v[i] != VMS_NONE)
			st->cur[i] = f->v[i];
	st->meta[VMS_MMETA_TIME] = f->t_real_ns > 0 ? (uint64_t)f->t_real_ns : VMS_NONE;
	st->meta[VMS_MMETA_SEQ] = f->seq;
	st->meta[VMS_MMETA_GEN] = f->gen;
	st->meta[VMS_MMETA_LATE] = f->late_ns;
	st->meta[VMS_MMETA_MISSED] += f->missed_ticks;
	st->meta[VMS_MMETA_LOST] += f->lost_frames;
	st->meta[VMS_MMETA_SELF_CPU] += f->self_cpu_ns;
	st->meta[VMS_MMETA_HOST_INFO] = vms_reader_host_count(r) ? 1 : VMS_NONE;
	st->frames++;
	return 0;
}

void vms_mstate_reader(struct vms_mstate *st, const struct vms_reader *r)
{
	uint64_t iv = vms_reader_interval_ns(r);
	st->meta[VMS_MMETA_INTERVAL] = iv ? iv : VMS_NONE;
	st->meta[VMS_MMETA_READ] = st->frames;
	st->meta[VMS_MMETA_RMISSED] = vms_reader_missed(r);
	st->meta[VMS_MMETA_UNMAPPED] = st->m.unmapped;
	st->meta[VMS_MMETA_FILTERED] = st->m.filtered;
}

/* ---- exposition ------------------------------------------------------------- */

void vms_mbuf_free(struct vms_mbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static bool grow(struct vms_mbuf *b, size_t more)
{
	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put(struct vms_mbuf *b, const char *s, size_t n)
{
	if (!grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct vms_mbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void VMS_PRINTF(2, 3) putf(struct vms_mbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* HELP text: backslash and line feed escaped (and '"' in OpenMetrics) */
static void put_help(struct vms_mbuf *b, const char *s, bool om)
{
	for (; *s; s++) {
		if (*s == '\\')
			puts_(b, "\\\\");
		else if (*s == '\n')
			puts_(b, "\\n");
		else if (*s == '"' && om)
			puts_(b, "\\\"");
		else
			put(b, s, 1);
	}
}

/* the shortest decimal that reads back as the same double */
static void put_double(struct vms_mbuf *b, double v)
{
	char tmp[40];
	if (isnan(v)) {
		puts_(b, "NaN");
		return;
	}
	if (isinf(v)) {
		puts_(b, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (int p = 15; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, v);
		if (p == 17 || strtod(tmp, NULL) == v)
			break;
	}
	puts_(b, tmp);
}

int vms_metrics_list(const struct vms_reader *r, double user_hz, const struct vms_mopts *o, struct vms_mbuf *out)
{
	struct vms_metrics m;
	int e = vms_metrics_build(&m, r, user_hz, o);
	if (e < 0)
		return e;
	uint32_t n = vms_reader_ncols(r);
	for (uint32_t i = 0; i < n; i++) {
		struct vms_reader_col c;
		struct vms_reader_colid ci;
		if (vms_reader_col_info(r, i, &c) < 0 || vms_reader_col_id(r, i, &ci) < 0)
			continue;
		bool any = false;
		for (uint32_t k = 0; k < m.nm; k++) {
			const struct vms_mcol *s = &m.m[k];
			bool folded = false;
			for (uint32_t f = 0; f < s->nfold && !folded; f++)
				folded = s->fold[f] == i;
			if (s->col != i && !folded)
				continue;
			const char *nm = vms_mcol_name(&m, s);
			putf(out, "%s\t", c.name);
			puts_(out, nm);
			puts_(out, vms_mfams[s->fam].type == VMS_MT_COUNTER ? "_total{" : "{");
			puts_(out, s->labels);
			puts_(out, "}\n");
			any = true;
		}
		if (any)
			continue;
		unsigned g = vms_catalog_group(ci.group, strlen(ci.group));
		const struct vms_colid id = {(uint8_t)g, (uint16_t)vms_catalog_field(g, ci.field), ci.entity, ci.sub,
					     ci.field};
		struct vms_mcol tmp[VMS_MMAP_MAX];
		int k = vms_metrics_map(&id, c.key, c.scale, user_hz, m.names, tmp);
		for (int j = 0; j < k; j++) {
			free(tmp[j].labels);
			free(tmp[j].name);
		}
		const struct vms_mexcl *x = k > 0 ? NULL : vms_metrics_excluded(&id);
		puts_(out, c.name);
		if (k > 0)
			puts_(out, "\t-\tfiltered\n");
		else if (x) {
			puts_(out, "\t-\texcluded: ");
			puts_(out, x->why);
			puts_(out, "\n");
		} else
			puts_(out, "\t-\tunmapped\n");
	}
	vms_metrics_free(&m);
	return out->oom ? -ENOMEM : 0;
}

double vms_mcol_value(const struct vms_mcol *s, const uint64_t *v, const uint64_t *meta)
{
	if (!(s->col & VMS_MCOL_META) && !v)
		return NAN;
	uint64_t raw = s->col & VMS_MCOL_META ? meta[s->col & ~VMS_MCOL_META] : v[s->col];
	if (raw == VMS_NONE)
		return NAN;
	if (s->nfold || s->foff) {
		/* the bucket: absent when one of its counters is */
		double sum = (double)raw + (double)s->foff;
		for (uint32_t k = 0; k < s->nfold; k++) {
			if (v[s->fold[k]] == VMS_NONE)
				return NAN;
			sum += (double)v[s->fold[k]];
		}
		return sum * s->mul / s->div;
	}
	if (s->match && raw != s->want)
		return NAN; /* another state's series */
	if (s->age || s->timedout) {
		uint64_t t = meta[VMS_MMETA_TIME];
		if (t == VMS_NONE)
			return NAN;
		double age = ((double)t - (double)raw) / 1e9;
		if (s->timedout)
			return age > VMS_SLOW_TIMEOUT_S ? 1 : 0;
		return age;
	}
	return (double)raw * s->mul / s->div;
}

enum vms_expo vms_expo_negotiate(const char *accept)
{
	/* Prometheus asks "application/openmetrics-text;version=1.0.0,...;
	 * text/plain;version=0.0.4;q=0.5": OpenMetrics whenever it is named
	 * with a non-zero quality */
	if (!accept)
		return VMS_EXPO_PROM;
	const char *p = accept;
	while ((p = strcasestr(p, "application/openmetrics-text"))) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char part[256];
		snprintf(part, sizeof(part), "%.*s", (int)(n < sizeof(part) ? n : sizeof(part) - 1), p);
		const char *q = strstr(part, "q=");
		if (!q || strtod(q + 2, NULL) > 0)
			return VMS_EXPO_OPENMETRICS;
		p += n;
	}
	return VMS_EXPO_PROM;
}

int vms_metrics_expose(const struct vms_metrics *m, const uint64_t *v, const uint64_t *meta,
		       enum vms_expo fmt, bool stamp, struct vms_mbuf *out)
{
	bool om = fmt == VMS_EXPO_OPENMETRICS;
	char ts[48] = "";
	uint64_t t = meta[VMS_MMETA_TIME];
	if (stamp && t != VMS_NONE) {
		uint64_t ms = t / 1000000;
		if (om)
			snprintf(ts, sizeof(ts), " %llu.%03llu", (unsigned long long)(ms / 1000),
				 (unsigned long long)(ms % 1000));
		else
			snprintf(ts, sizeof(ts), " %llu", (unsigned long long)ms);
	}
	for (uint32_t i = 0; i < m->nm;) {
		uint32_t j = i;
		const struct vms_mfam *f = &vms_mfams[m->m[i].fam];
		const char *fname = vms_mcol_name(m, &m->m[i]);
		bool counter = f->type == VMS_MT_COUNTER, any = false;
		const char *tname = counter ? "counter" : f->type == VMS_MT_GAUGE ? "gauge" : om ? "unknown" : "untyped";
		for (; j < m->nm && m->m[j].fam == m->m[i].fam && !strcmp(vms_mcol_name(m, &m->m[j]), fname); j++) {
			const struct vms_mcol *s = &m->m[j];
			double x = vms_mcol_value(s, v, meta);
			if (isnan(x))
				continue; /* missing: absent, never 0 */
			if (!any) {
				/* OpenMetrics names the counter family without _total;
				 * 0.0.4 names it as its samples */
				const char *sfx = counter && !om ? "_total" : "";
				putf(out, "# HELP %s%s ", fname, sfx);
				put_help(out, f->help, om);
				putf(out, "\n# TYPE %s%s %s\n", fname, sfx, tname);
				size_t nl = strlen(fname), ul = strlen(f->unit);
				if (om && ul && nl > ul && fname[nl - ul - 1] == '_' && strcmp(fname + nl - ul, f->unit) == 0)
					putf(out, "# UNIT %s %s\n", fname, f->unit);
				any = true;
			}
			puts_(out, fname);
			if (counter)
				puts_(out, "_total");
			if (s->labels[0]) {
				puts_(out, "{");
				puts_(out, s->labels);
				puts_(out, "}");
			}
			puts_(out, " ");
			uint64_t raw = s->col & VMS_MCOL_META ? meta[s->col & ~VMS_MCOL_META] : v[s->col];
			if (!s->age && !s->timedout && !s->nfold && !s->foff && s->mul == 1 && s->div == 1)
				putf(out, "%llu", (unsigned long long)raw);
			else
				put_double(out, x);
			puts_(out, ts);
			puts_(out, "\n");
		}
		i = j;
	}
	if (om)
		puts_(out, "# EOF\n");
	return out->oom ? -ENOMEM : 0;
}
