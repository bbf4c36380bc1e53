/* SPDX-License-Identifier: MIT */
/* rates_plan.c - which rates a schema gives and from which counters (the
 * rate plan, rates.h), following sysstat 12.7 (sysstat/sysstat
 * at c1eb661ab208, the version whose tests/expected.* our fixtures use).
 *
 * Intervals: sysstat's S_VALUE(m, n, p) = (n - m) / p * 100 with p in
 * 1/100 s (common.h) is Δ / Δt in seconds; Δt here is the difference of
 * the frames' t_mono_ns.
 *
 * CPU (mpstat.c write_plain_cpu_stats, pr_stats.c print_cpu_stats for
 * `sar -u ALL`, rd_stats.c get_per_cpu_interval):
 *   total  = Δuser + Δnice + Δsystem + Δidle + Δiowait + Δirq + Δsoftirq
 *            + Δsteal + ishift  (guest and guest_nice are already inside
 *            user and nice), every Δ that went backwards counted as 0
 *            (get_cpu_interval_delta), ishift = the amount by which
 *            user - guest (nice - guest_nice) went backwards while user
 *            (nice) did not
 *   %usr   = Δ(user - guest) / total * 100, 0 if it went backwards
 *   %nice  = Δ(nice - guest_nice) / total * 100, 0 if it went backwards
 *   %sys %iowait %irq %soft %steal %guest %gnice %idle
 *          = Δfield / total * 100, 0 if the field went backwards
 *            (common.c ll_sp_value)
 *   total 0: a tickless CPU prints 0 and %idle 100 (mpstat.c); "all"
 *   cannot be tickless and prints 0 everywhere (pr_stats.c: itv = 1).
 *   Deviation: get_per_cpu_interval() also guesses that a CPU came back
 *   online when idle (or iowait with idle) decreased and then counts the
 *   whole current value; in a vmsampler stream an offlined CPU's columns
 *   vanish (new generation) or read as missing, so its first interval
 *   back is empty instead, and a decreasing field simply counts as 0.
 *   sysstat computes "all" as the sum of the CPU lines; we use the
 *   kernel's own "cpu" line (cpu.all.*): the same numbers up to the
 *   kernel's summation races (checked against mpstat's output in
 *   tests/test_rates.c).
 *
 * Disks (iostat.c write_ext_stat / write_plain_ext_stat for `iostat -x`,
 * rd_stats.c compute_ext_disk_stats, pr_stats.c for `sar -d`):
 *   tps        = (Δrd_ios + Δwr_ios + Δdc_ios) / Δt
 *   r/s rrqm/s = Δrd_ios / Δt, Δrd_merges / Δt
 *   rkB/s      = Δrd_sectors / 2 / Δt
 *   %rrqm      = Δrd_merges / (Δrd_merges + Δrd_ios) * 100 (0 if both 0)
 *   r_await    = Δrd_ticks / Δrd_ios (ms; 0 if no I/O)
 *   rareq-sz   = Δrd_sectors / 2 / Δrd_ios (kB; 0 if no I/O)
 *   w.. d.. likewise; f/s = Δfl_ios / Δt, f_await = Δfl_ticks / Δfl_ios
 *   aqu-sz     = Δtime_in_queue / Δt / 1000
 *   %util      = Δio_ticks / Δt / 10 (ms busy per s, in %)
 *   in_flight  is a gauge and passes through.
 *   await      = (Δrd_ticks + Δwr_ticks + Δdc_ticks) / (Δrd_ios + Δwr_ios
 *                + Δdc_ios) (ms; 0 if no I/O)     sar -d (rd_stats.c
 *   areq-sz    = (Δrd_sectors + Δwr_sectors + Δdc_sectors) / 2 / (Δrd_ios
 *                + Δwr_ios + Δdc_ios) (kB; 0 if no I/O)  compute_ext_disk_stats)
 * Network (pr_stats.c print_net_dev_stats / print_net_edev_stats, `sar -n
 * DEV,EDEV`): rxpck/s txpck/s rxkB/s (Δbytes / 1024 / Δt) txkB/s rxcmp/s
 * txcmp/s rxmcst/s rxerr/s txerr/s coll/s rxdrop/s txdrop/s txcarr/s
 * rxfram/s rxfifo/s txfifo/s.
 * /proc/stat totals (`sar -w`, `sar -I SUM`): stat.ctxt -> stat.cswch/s,
 * stat.processes -> stat.proc/s, stat.intr -> stat.intr/s.
 * Per-VM columns (source vm, vm.<name>.*; see vmsampler(1)):
 *   vm.N.%cpu %usr %sys   Δcpu_time, Δcpu_user, Δcpu_system (ns) / Δt * 100:
 *                         percent of one CPU (like top's per-process %CPU)
 *   vm.N.vcpuK.%run       Δtime / Δt * 100: the vCPU thread ran
 *   vm.N.vcpuK.%steal     Δdelay / Δt * 100: runnable but waiting for a host
 *                         CPU, what the guest sees as steal
 *   vm.N.vcpuK.slices/s   Δslices / Δt
 *   vm.N.net.T.*          as net.<name>.* above, in the guest's direction
 *   vm.N.io.rkB/s wkB/s   Δread_bytes, Δwrite_bytes / 1024 / Δt (and
 *                         cg_rkB/s cg_wkB/s from the cgroup's io.stat)
 *   anything else         the generic rules below (balloon and block
 *                         counters get c/s, gauges pass through)
 *   and a VM's totals (`vmsampler report --vm`):
 *   vm.N.%steal           ΣΔvcpuK.delay / (vCPUs * Δt) * 100: the share of
 *                         the interval its vCPUs waited for a host CPU
 *   vm.N.dlyms/s          ΣΔvcpuK.delay / Δt / 10^6: ms of run delay per s
 *   vm.N.rxkB/s txkB/s    ΣΔnet.T.rx_bytes, tx_bytes / 1024 / Δt over its taps
 *   vm.N.%cap             Δcpu_time / Δt / 10^9 / (cg.cpu_quota_us /
 *                         cg.cpu_period_us) * 100: its CPU as a share of its
 *                         cgroup's CPU cap (empty without a quota)
 *   vm.N.%thrtl           Δcg.nr_throttled / Δcg.nr_periods * 100: the share
 *                         of its enforcement periods in which it was
 *                         throttled (0 when no period elapsed)
 *   vm.N.cg.psi.R.%some %full  as psi.R.* below, for the VM's cgroup
 * Host memory (sources meminfo, vmstat, psi; sysstat at c1eb661ab208):
 *   psi.R.%some %full     Δpsi.R.some.total (full) / Δt / 10^4: the share of
 *                         the interval in which some (all non-idle) tasks
 *                         stalled on R, in % (pr_stats.c print_psi*_stats:
 *                         Δtotal / (100 * itv), itv in 1/100 s)
 *   vmstat.K/s            Δvmstat.K / Δt, every vmstat counter (the generic
 *                         rule below); sar -B's pgpgin/s pgpgout/s fault/s
 *                         majflt/s pgfree/s and sar -W's pswpin/s pswpout/s
 *                         are vmstat.pgpgin/s ... vmstat.pswpout/s
 *   vmstat.pgscank/s      Δpgscan_kswapd / Δt (the sum of the per-zone
 *                         pgscan_kswapd_<zone> before Linux 4.8)
 *   vmstat.pgscand/s      Δpgscan_direct / Δt (likewise; not
 *                         pgscan_direct_throttle)
 *   vmstat.pgsteal/s      (Δpgsteal_anon + Δpgsteal_file) / Δt (rd_stats.c
 *                         read_vmstat_paging: the kernel counts each page
 *                         twice, by reclaimer and by type); a kernel
 *                         without them (before 5.x): Δ of every
 *                         pgsteal_kswapd* and pgsteal_direct* line
 *   vmstat.%vmeff         Δpgsteal / (Δpgscank + Δpgscand) * 100, 0 when
 *                         nothing was scanned
 *   sar -r and -S from the meminfo gauges at the frame (print_ram_memory_stats,
 *   print_swap_memory_stats), kB = bytes / 1024:
 *   mem.kbmemfree kbavail kbbuffers kbcached kbcommit kbactive kbinact kbdirty
 *                         MemFree MemAvailable Buffers Cached Committed_AS
 *                         Active Inactive Dirty
 *   mem.kbmemused         MemTotal - MemAvailable (sysstat since June 2025;
 *                         12.6 printed MemTotal - MemFree - Buffers - Cached
 *                         - Slab)
 *   mem.%memused          kbmemused / MemTotal * 100
 *   mem.%commit           Committed_AS / (MemTotal + SwapTotal) * 100
 *   mem.kbswpfree kbswpcad  SwapFree, SwapCached
 *   mem.kbswpused         SwapTotal - SwapFree
 *   mem.%swpused          kbswpused / SwapTotal * 100 (0 without swap)
 *   mem.%swpcad           SwapCached / kbswpused * 100 (0 when none is used)
 *   Each exists only when the kernel has every line it reads.
 * Any other counter c -> c/s = Δc / 10^scale / Δt; any other gauge passes
 * through.
 *
 * How a plan is computed over one interval or several: rates.c. */
#include "rates.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- plans ------------------------------------------------------------- */

/* the fields of the catalogue's disk and net tables, in their order
 * (catalog.c); the cpu table's is enum vms_cpu_field */
enum disk_field {
	DF_RD_IOS, DF_RD_MERGES, DF_RD_SECTORS, DF_RD_TICKS, DF_WR_IOS, DF_WR_MERGES, DF_WR_SECTORS,
	DF_WR_TICKS, DF_IN_FLIGHT, DF_IO_TICKS, DF_TIME_IN_QUEUE, DF_DC_IOS, DF_DC_MERGES,
	DF_DC_SECTORS, DF_DC_TICKS, DF_FL_IOS, DF_FL_TICKS, DF_N
};

enum net_field {
	NF_RX_BYTES, NF_RX_PACKETS, NF_RX_ERRS, NF_RX_DROP, NF_RX_FIFO, NF_RX_FRAME, NF_RX_COMPRESSED,
	NF_RX_MULTICAST, NF_TX_BYTES, NF_TX_PACKETS, NF_TX_ERRS, NF_TX_DROP, NF_TX_FIFO, NF_TX_COLLS,
	NF_TX_CARRIER, NF_TX_COMPRESSED, NF_N
};

/* sar -n DEV then EDEV order: output name, input, multiplier */
static const struct {
	const char *name;
	int field;
	double mul;
} net_out[] = {
	{"rxpck/s", NF_RX_PACKETS, 1},  {"txpck/s", NF_TX_PACKETS, 1},
	{"rxkB/s", NF_RX_BYTES, 1.0 / 1024}, {"txkB/s", NF_TX_BYTES, 1.0 / 1024},
	{"rxcmp/s", NF_RX_COMPRESSED, 1}, {"txcmp/s", NF_TX_COMPRESSED, 1},
	{"rxmcst/s", NF_RX_MULTICAST, 1}, {"rxerr/s", NF_RX_ERRS, 1},
	{"txerr/s", NF_TX_ERRS, 1},      {"coll/s", NF_TX_COLLS, 1},
	{"rxdrop/s", NF_RX_DROP, 1},     {"txdrop/s", NF_TX_DROP, 1},
	{"txcarr/s", NF_TX_CARRIER, 1},  {"rxfram/s", NF_RX_FRAME, 1},
	{"rxfifo/s", NF_RX_FIFO, 1},     {"txfifo/s", NF_TX_FIFO, 1},
};

_Static_assert(DF_N >= (int)VMS_CF_N && DF_N >= (int)NF_N, "disk has the most fields");

static const char *const cpu_pct_names[VMS_CPU_NPCT] = {
	"%usr", "%nice", "%sys", "%iowait", "%irq", "%soft", "%steal", "%guest", "%gnice", "%idle",
};

enum group_kind { G_NONE, G_CPU, G_DISK, G_NET, G_VMCPU, G_VCPU, G_VMIO };

struct builder {
	struct vms_rate_plan *p;
	uint32_t cap;
	int err;
};

/* The index of `field` in the catalogue's group g. */
static int fid(unsigned g, const char *field)
{
	unsigned f = vms_catalog_field(g, field);
	return f == VMS_FIELD_OPEN ? -1 : (int)f;
}

/* The rate group of column c, and its field's index there. */
static enum group_kind classify(const struct vms_col *c, int *field)
{
	int f = c->field_id == VMS_FIELD_OPEN ? -1 : c->field_id;
	*field = f;
	if (f < 0)
		return G_NONE;
	switch (c->group) {
	case VMS_G_CPU:
		return f < VMS_CF_N ? G_CPU : G_NONE;
	case VMS_G_DISK:
		return f < DF_N ? G_DISK : G_NONE;
	case VMS_G_NET:
	case VMS_G_VMNET: /* the same fields */
		return f < NF_N ? G_NET : G_NONE;
	case VMS_G_VM:
		/* cpu_time, cpu_user, cpu_system */
		*field = f - fid(VMS_G_VM, "cpu_time");
		return *field >= 0 && *field < 3 ? G_VMCPU : G_NONE;
	case VMS_G_VCPU:
		return G_VCPU; /* time, delay, slices */
	case VMS_G_VMIO:
		return G_VMIO; /* read_bytes, write_bytes, cg_read_bytes, cg_write_bytes */
	}
	return G_NONE;
}

/* Columns of the same entity: group, entity and sub. */
static bool same_entity(const struct vms_col *a, const struct vms_col *b)
{
	return a->group == b->group && strcmp(a->entity, b->entity) == 0 && strcmp(a->sub, b->sub) == 0;
}

/* An output column of identity (group, entity, sub, out); no group: named out. */
static struct vms_rate_col *add(struct builder *b, uint8_t op, int32_t a, unsigned group, const char *entity,
				const char *sub, const char *out)
{
	struct vms_rate_plan *p = b->p;
	char buf[VMS_COL_NAME_MAX + 64];
	if (b->err)
		return NULL;
	if (p->ncols == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 32;
		struct vms_rate_col *n = realloc(p->cols, cap * sizeof(*n));
		if (!n) {
			b->err = -ENOMEM;
			return NULL;
		}
		p->cols = n;
		b->cap = cap;
	}
	int n = group ? vms_colname(buf, sizeof(buf), group, entity, sub, out) : snprintf(buf, sizeof(buf), "%s", out);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		b->err = n < 0 ? n : -ENAMETOOLONG;
		return NULL;
	}
	char *name = strdup(buf);
	if (!name) {
		b->err = -ENOMEM;
		return NULL;
	}
	struct vms_rate_col *c = &p->cols[p->ncols++];
	*c = (struct vms_rate_col){.name = name, .group = (uint8_t)group, .entity = entity ? entity : "",
				   .sub = sub ? sub : "", .out = name + n - strlen(out), .op = op, .a = a,
				   .b = -1, .c = -1, .mul = 1};
	return c;
}

/* An output of the entity of column id. */
static struct vms_rate_col *add_of(struct builder *b, uint8_t op, int32_t a, const struct vms_col *id, const char *out)
{
	return add(b, op, a, id->group, id->entity, id->sub, out);
}

/* A column of operation op over the inputs num[0..nnum) and den[0..nden)
 * (its own copy in xs), its first input a: NULL when out of memory. */
static struct vms_rate_col *add_xs(struct builder *b, uint8_t op, int32_t a, unsigned group, const char *entity,
				   const char *out, const int32_t *num, unsigned nnum, const int32_t *den,
				   unsigned nden, double mul)
{
	int32_t *xs = malloc((nnum + nden) * sizeof(*xs));
	struct vms_rate_col *c = xs ? add(b, op, a, group, entity, NULL, out) : NULL;
	if (!c) {
		free(xs);
		if (!b->err)
			b->err = -ENOMEM;
		return NULL;
	}
	memcpy(xs, num, nnum * sizeof(*xs));
	if (nden)
		memcpy(xs + nnum, den, nden * sizeof(*xs));
	c->xs = xs;
	c->nnum = (uint16_t)nnum;
	c->nden = (uint16_t)nden;
	c->mul = mul;
	return c;
}

/* A VMS_ROP_SUM column over num[0..nnum) and den[0..nden). */
static void add_sum(struct builder *b, unsigned group, const char *entity, const char *out, const int32_t *num,
		    unsigned nnum, const int32_t *den, unsigned nden, double mul)
{
	if (nnum)
		add_xs(b, VMS_ROP_SUM, num[0], group, entity, out, num, nnum, den, nden, mul);
}

/* "<field>/s" of column i: its Δ per second */
static struct vms_rate_col *add_per_s(struct builder *b, uint32_t i)
{
	const struct vms_col *col = &b->p->schema->cols[i];
	char out[VMS_COL_NAME_MAX + 4];
	snprintf(out, sizeof(out), "%s/s", col->group ? col->field : col->name);
	return add_of(b, VMS_ROP_PER_S, (int32_t)i, col, out);
}

static void plan_cpu(struct builder *b, const struct vms_col *id, const int32_t *f, bool all)
{
	struct vms_rate_plan *p = b->p;
	/* user, nice, system and idle exist on every kernel sysstat reads */
	if (f[VMS_CF_USER] < 0 || f[VMS_CF_NICE] < 0 || f[VMS_CF_SYSTEM] < 0 || f[VMS_CF_IDLE] < 0) {
		for (int k = 0; k < VMS_CF_N; k++)
			if (f[k] >= 0)
				add_per_s(b, (uint32_t)f[k]);
		return;
	}
	struct vms_cpu_group *g = realloc(p->cpu, (p->ncpu + 1) * sizeof(*g));
	if (!g) {
		b->err = -ENOMEM;
		return;
	}
	p->cpu = g;
	g = &p->cpu[p->ncpu];
	memset(g, 0, sizeof(*g));
	memcpy(g->f, f, sizeof(g->f));
	g->all = all;
	/* a percentage only where the kernel has its field: no faked zeros */
	static const int8_t needs[VMS_CPU_NPCT] = {
		[VMS_CPU_USR] = VMS_CF_USER,     [VMS_CPU_NICE] = VMS_CF_NICE,
		[VMS_CPU_SYS] = VMS_CF_SYSTEM,   [VMS_CPU_IOWAIT] = VMS_CF_IOWAIT,
		[VMS_CPU_IRQ] = VMS_CF_IRQ,      [VMS_CPU_SOFT] = VMS_CF_SOFTIRQ,
		[VMS_CPU_STEAL] = VMS_CF_STEAL,  [VMS_CPU_GUEST] = VMS_CF_GUEST,
		[VMS_CPU_GNICE] = VMS_CF_GUEST_NICE, [VMS_CPU_IDLE] = VMS_CF_IDLE,
	};
	for (int k = 0; k < VMS_CPU_NPCT; k++) {
		if (f[needs[k]] < 0)
			continue;
		struct vms_rate_col *c = add_of(b, VMS_ROP_CPU, f[needs[k]], id, cpu_pct_names[k]);
		if (c) {
			c->grp = p->ncpu;
			c->field = (uint8_t)k;
			c->cpu_all = all;
		}
	}
	p->ncpu++;
}

static void plan_disk(struct builder *b, const struct vms_col *id, const int32_t *f)
{
	struct vms_rate_col *c;
	/* tps: reads + writes + discards (iostat.c write_plain_ext_stat) */
	if (f[DF_RD_IOS] >= 0 && f[DF_WR_IOS] >= 0 && (c = add_of(b, VMS_ROP_PER_S, f[DF_RD_IOS], id, "tps"))) {
		c->b = f[DF_WR_IOS];
		c->c = f[DF_DC_IOS];
	}
	static const struct {
		int ios, merges, sectors, ticks;
		const char *n[6];
	} dir[] = {
		{DF_RD_IOS, DF_RD_MERGES, DF_RD_SECTORS, DF_RD_TICKS,
		 {"r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz"}},
		{DF_WR_IOS, DF_WR_MERGES, DF_WR_SECTORS, DF_WR_TICKS,
		 {"w/s", "wkB/s", "wrqm/s", "%wrqm", "w_await", "wareq-sz"}},
		{DF_DC_IOS, DF_DC_MERGES, DF_DC_SECTORS, DF_DC_TICKS,
		 {"d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz"}},
	};
	for (size_t d = 0; d < VMS_ARRAY_SIZE(dir); d++) {
		int32_t ios = f[dir[d].ios], mg = f[dir[d].merges], sec = f[dir[d].sectors],
			tk = f[dir[d].ticks];
		if (ios < 0)
			continue;
		add_of(b, VMS_ROP_PER_S, ios, id, dir[d].n[0]);
		if (sec >= 0 && (c = add_of(b, VMS_ROP_PER_S, sec, id, dir[d].n[1])))
			c->mul = 0.5;
		if (mg >= 0) {
			add_of(b, VMS_ROP_PER_S, mg, id, dir[d].n[2]);
			if ((c = add_of(b, VMS_ROP_PCT_OF, mg, id, dir[d].n[3])))
				c->b = ios;
		}
		if (tk >= 0 && (c = add_of(b, VMS_ROP_PER_OP, tk, id, dir[d].n[4])))
			c->b = ios;
		if (sec >= 0 && (c = add_of(b, VMS_ROP_PER_OP, sec, id, dir[d].n[5]))) {
			c->b = ios;
			c->mul = 0.5;
		}
	}
	if (f[DF_FL_IOS] >= 0) {
		add_of(b, VMS_ROP_PER_S, f[DF_FL_IOS], id, "f/s");
		if (f[DF_FL_TICKS] >= 0 && (c = add_of(b, VMS_ROP_PER_OP, f[DF_FL_TICKS], id, "f_await")))
			c->b = f[DF_FL_IOS];
	}
	if (f[DF_TIME_IN_QUEUE] >= 0 && (c = add_of(b, VMS_ROP_PER_S, f[DF_TIME_IN_QUEUE], id, "aqu-sz")))
		c->mul = 1.0 / 1000;
	if (f[DF_IO_TICKS] >= 0 && (c = add_of(b, VMS_ROP_PER_S, f[DF_IO_TICKS], id, "%util")))
		c->mul = 1.0 / 10;
	if (f[DF_IN_FLIGHT] >= 0 && (c = add_of(b, VMS_ROP_GAUGE, f[DF_IN_FLIGHT], id, "in_flight")))
		c->scale = b->p->schema->cols[f[DF_IN_FLIGHT]].scale;
	/* sar -d: await and areq-sz over reads, writes and discards together */
	if (f[DF_RD_IOS] >= 0 && f[DF_WR_IOS] >= 0) {
		int32_t ios[3], tk[3], sec[3];
		unsigned n = 0, nt = 0, ns = 0;
		static const int dirs[3][3] = {{DF_RD_IOS, DF_RD_TICKS, DF_RD_SECTORS},
					       {DF_WR_IOS, DF_WR_TICKS, DF_WR_SECTORS},
					       {DF_DC_IOS, DF_DC_TICKS, DF_DC_SECTORS}};
		for (int d = 0; d < 3; d++) {
			if (f[dirs[d][0]] < 0)
				continue;
			ios[n++] = f[dirs[d][0]];
			if (f[dirs[d][1]] >= 0)
				tk[nt++] = f[dirs[d][1]];
			if (f[dirs[d][2]] >= 0)
				sec[ns++] = f[dirs[d][2]];
		}
		/* every direction counted has its ticks and sectors */
		if (nt == n)
			add_sum(b, id->group, id->entity, "await", tk, nt, ios, n, 1);
		if (ns == n)
			add_sum(b, id->group, id->entity, "areq-sz", sec, ns, ios, n, 0.5);
	}
}

static void plan_net(struct builder *b, const struct vms_col *id, const int32_t *f)
{
	for (size_t k = 0; k < VMS_ARRAY_SIZE(net_out); k++) {
		if (f[net_out[k].field] < 0)
			continue;
		struct vms_rate_col *c = add_of(b, VMS_ROP_PER_S, f[net_out[k].field], id, net_out[k].name);
		if (c)
			c->mul = net_out[k].mul;
	}
}

/* One output per present input: name suffix and multiplier. */
static void plan_each(struct builder *b, const struct vms_col *id, const int32_t *f, unsigned n,
		      const char *const *out, const double *mul)
{
	for (unsigned k = 0; k < n; k++) {
		struct vms_rate_col *c;
		if (f[k] >= 0 && (c = add_of(b, VMS_ROP_PER_S, f[k], id, out[k])))
			c->mul = mul[k];
	}
}

static void plan_vm(struct builder *b, enum group_kind k, const struct vms_col *id, const int32_t *f)
{
	static const char *const cpu_out[] = {"%cpu", "%usr", "%sys"};
	static const double pct[] = {1e-7, 1e-7, 1e-7}; /* ns per s -> percent */
	static const char *const vcpu_out[] = {"%run", "%steal", "slices/s"};
	static const double vcpu_mul[] = {1e-7, 1e-7, 1};
	static const char *const io_out[] = {"rkB/s", "wkB/s", "cg_rkB/s", "cg_wkB/s"};
	static const double kib[] = {1.0 / 1024, 1.0 / 1024, 1.0 / 1024, 1.0 / 1024};
	if (k == G_VMCPU)
		plan_each(b, id, f, 3, cpu_out, pct);
	else if (k == G_VCPU)
		plan_each(b, id, f, 3, vcpu_out, vcpu_mul);
	else
		plan_each(b, id, f, 4, io_out, kib);
}


static bool is_vm_group(unsigned g)
{
	return g >= VMS_G_VM && g <= VMS_G_VMPERF;
}

/* The column of group g, entity ent (no sub), field `field` and kind
 * `kind` (the first), or -1. */
static int32_t find_id(const struct vms_schema *s, unsigned g, const char *ent, const char *field, uint8_t kind)
{
	for (uint32_t i = 0; i < s->ncols; i++) {
		const struct vms_col *c = &s->cols[i];
		if (c->group == g && c->kind == kind && !c->sub[0] && strcmp(c->field, field) == 0 &&
		    strcmp(c->entity, ent) == 0)
			return (int32_t)i;
	}
	return -1;
}

/* A VM's CPU against its cgroup's cap, and its throttled share. */
static void plan_vm_cap(struct builder *b, const char *vm)
{
	const struct vms_schema *s = b->p->schema;
	struct vms_rate_col *c;
	int32_t t = find_id(s, VMS_G_VM, vm, "cpu_time", VMS_KIND_COUNTER),
		q = find_id(s, VMS_G_VMCG, vm, "cpu_quota_us", VMS_KIND_GAUGE),
		pe = find_id(s, VMS_G_VMCG, vm, "cpu_period_us", VMS_KIND_GAUGE),
		nt = find_id(s, VMS_G_VMCG, vm, "nr_throttled", VMS_KIND_COUNTER),
		np = find_id(s, VMS_G_VMCG, vm, "nr_periods", VMS_KIND_COUNTER);
	if (t >= 0 && q >= 0 && pe >= 0 && (c = add(b, VMS_ROP_CAP, t, VMS_G_VM, vm, NULL, "%cap"))) {
		c->b = q;
		c->c = pe;
		c->mul = 100;
	}
	if (nt >= 0 && np >= 0 && (c = add(b, VMS_ROP_PER_OP, nt, VMS_G_VM, vm, NULL, "%thrtl"))) {
		c->b = np;
		c->mul = 100;
	}
}

/* Each VM's totals over its vCPUs and its taps (after its own columns). */
static void plan_vm_totals(struct builder *b)
{
	const struct vms_schema *s = b->p->schema;
	size_t n = s->ncols ? s->ncols : 1;
	bool *done = calloc(n, sizeof(*done));
	int32_t *dl = malloc(n * sizeof(*dl)), *rx = malloc(n * sizeof(*rx)), *tx = malloc(n * sizeof(*tx));
	const int delay = fid(VMS_G_VCPU, "delay");
	if (!done || !dl || !rx || !tx) {
		b->err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < s->ncols && !b->err; i++) {
		const char *vm = s->cols[i].entity;
		if (done[i] || !is_vm_group(s->cols[i].group))
			continue;
		unsigned nd = 0, nr = 0, nt = 0;
		for (uint32_t j = i; j < s->ncols; j++) {
			const struct vms_col *c = &s->cols[j];
			if (done[j] || !is_vm_group(c->group) || strcmp(c->entity, vm) != 0)
				continue;
			done[j] = true;
			if (c->kind != VMS_KIND_COUNTER)
				continue;
			if (c->group == VMS_G_VCPU && c->field_id == delay)
				dl[nd++] = (int32_t)j;
			else if (c->group == VMS_G_VMNET && c->field_id == NF_RX_BYTES)
				rx[nr++] = (int32_t)j;
			else if (c->group == VMS_G_VMNET && c->field_id == NF_TX_BYTES)
				tx[nt++] = (int32_t)j;
		}
		if (nd > UINT16_MAX || nr > UINT16_MAX || nt > UINT16_MAX)
			continue;
		if (nd) {
			add_sum(b, VMS_G_VM, vm, "%steal", dl, nd, NULL, 0, 1e-7 / nd);
			add_sum(b, VMS_G_VM, vm, "dlyms/s", dl, nd, NULL, 0, 1e-6);
		}
		add_sum(b, VMS_G_VM, vm, "rxkB/s", rx, nr, NULL, 0, 1.0 / 1024);
		add_sum(b, VMS_G_VM, vm, "txkB/s", tx, nt, NULL, 0, 1.0 / 1024);
		plan_vm_cap(b, vm);
	}
out:
	free(done);
	free(dl);
	free(rx);
	free(tx);
}

/* ---- host memory: sar -B, -r, -S (see the top of this file) ---------------- */

/* The vmstat counters `key`, else those named key_<zone> (a kernel before
 * 4.8 counted per zone), but not key_throttle: at most max, into xs; how
 * many. */
static unsigned vmstat_cols(const struct vms_schema *s, const char *key, int32_t *xs, unsigned max)
{
	int32_t x = find_id(s, VMS_G_VMSTAT, "", key, VMS_KIND_COUNTER);
	if (x >= 0) {
		xs[0] = x;
		return 1;
	}
	unsigned n = 0;
	size_t l = strlen(key);
	for (uint32_t i = 0; i < s->ncols && n < max; i++) {
		const struct vms_col *c = &s->cols[i];
		if (c->group == VMS_G_VMSTAT && c->kind == VMS_KIND_COUNTER && strncmp(c->field, key, l) == 0 &&
		    c->field[l] == '_' && strcmp(c->field + l, "_throttle") != 0)
			xs[n++] = (int32_t)i;
	}
	return n;
}

/* A VMS_ROP_GEXPR column over the meminfo gauges named in num and den
 * (NULL-terminated lists of keys, "-Key" subtracted): none if one is
 * missing. */
static void add_gexpr(struct builder *b, const char *out, const char *const *num, const char *const *den,
		      double mul, uint8_t decimals)
{
	const struct vms_schema *s = b->p->schema;
	const char *const *lists[2] = {num, den};
	int32_t xs[8];
	unsigned cnt[2] = {0, 0}, n = 0;
	for (int l = 0; l < 2; l++)
		for (const char *const *k = lists[l]; k && *k; k++) {
			bool minus = **k == '-';
			int32_t x = find_id(s, VMS_G_MEM, "", *k + minus, VMS_KIND_GAUGE);
			if (x < 0 || n == VMS_ARRAY_SIZE(xs))
				return;
			xs[n++] = minus ? ~x : x;
			cnt[l]++;
		}
	struct vms_rate_col *c = add_xs(b, VMS_ROP_GEXPR, xs[0] < 0 ? ~xs[0] : xs[0], VMS_G_MEM, NULL, out, xs,
					cnt[0], xs + cnt[0], cnt[1], mul);
	if (c)
		c->field = decimals;
}

static void plan_mem(struct builder *b)
{
	const struct vms_schema *s = b->p->schema;
	/* sar -B: the sums over reclaimers and zones */
	int32_t k[16], d[16], st[32];
	unsigned nk = vmstat_cols(s, "pgscan_kswapd", k, 16);
	unsigned nd = vmstat_cols(s, "pgscan_direct", d, 16);
	unsigned ns = 0;
	int32_t an = find_id(s, VMS_G_VMSTAT, "", "pgsteal_anon", VMS_KIND_COUNTER),
		fi = find_id(s, VMS_G_VMSTAT, "", "pgsteal_file", VMS_KIND_COUNTER);
	if (an >= 0 && fi >= 0) {
		st[ns++] = an;
		st[ns++] = fi;
	} else if (an < 0 && fi < 0) {
		ns = vmstat_cols(s, "pgsteal_kswapd", st, 16);
		ns += vmstat_cols(s, "pgsteal_direct", st + ns, 16);
	}
	add_sum(b, VMS_G_VMSTAT, NULL, "pgscank/s", k, nk, NULL, 0, 1);
	add_sum(b, VMS_G_VMSTAT, NULL, "pgscand/s", d, nd, NULL, 0, 1);
	add_sum(b, VMS_G_VMSTAT, NULL, "pgsteal/s", st, ns, NULL, 0, 1);
	if (nk && nd && ns) {
		int32_t all[64];
		memcpy(all, st, ns * sizeof(*all));
		memcpy(all + ns, k, nk * sizeof(*all));
		memcpy(all + ns + nk, d, nd * sizeof(*all));
		add_sum(b, VMS_G_VMSTAT, NULL, "%vmeff", all, ns, all + ns, nk + nd, 100);
	}
	/* sar -r, sar -S */
#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
	static const struct {
		const char *out, *key;
	} kb[] = {
		{"kbmemfree", "MemFree"}, {"kbavail", "MemAvailable"}, {"kbbuffers", "Buffers"},
		{"kbcached", "Cached"}, {"kbcommit", "Committed_AS"}, {"kbactive", "Active"},
		{"kbinact", "Inactive"}, {"kbdirty", "Dirty"}, {"kbswpfree", "SwapFree"},
		{"kbswpcad", "SwapCached"},
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(kb); i++)
		add_gexpr(b, kb[i].out, L(kb[i].key), NULL, 1.0 / 1024, 0);
	add_gexpr(b, "kbmemused", L("MemTotal", "-MemAvailable"), NULL, 1.0 / 1024, 0);
	add_gexpr(b, "%memused", L("MemTotal", "-MemAvailable"), L("MemTotal"), 100, 2);
	add_gexpr(b, "%commit", L("Committed_AS"), L("MemTotal", "SwapTotal"), 100, 2);
	add_gexpr(b, "kbswpused", L("SwapTotal", "-SwapFree"), NULL, 1.0 / 1024, 0);
	add_gexpr(b, "%swpused", L("SwapTotal", "-SwapFree"), L("SwapTotal"), 100, 2);
	add_gexpr(b, "%swpcad", L("SwapCached"), L("SwapTotal", "-SwapFree"), 100, 2);
#undef L
}

/* psi's totals: the stall's share of the interval, as sar -q PSI names it */
static const struct {
	uint8_t group;
	const char *field, *out;
} psi_out[] = {
	{VMS_G_PSI, "some.total", "%some"},
	{VMS_G_PSI, "full.total", "%full"},
	{VMS_G_VMCG, "psi.cpu.some.total", "psi.cpu.%some"},
	{VMS_G_VMCG, "psi.cpu.full.total", "psi.cpu.%full"},
	{VMS_G_VMCG, "psi.memory.some.total", "psi.memory.%some"},
	{VMS_G_VMCG, "psi.memory.full.total", "psi.memory.%full"},
	{VMS_G_VMCG, "psi.io.some.total", "psi.io.%some"},
	{VMS_G_VMCG, "psi.io.full.total", "psi.io.%full"},
};

static void plan_single(struct builder *b, uint32_t i)
{
	const struct vms_col *col = &b->p->schema->cols[i];
	static const struct {
		const char *in, *out;
	} renames[] = {
		{"ctxt", "cswch/s"},
		{"processes", "proc/s"},
		{"intr", "intr/s"},
	};
	struct vms_rate_col *c;
	if (col->kind != VMS_KIND_COUNTER) {
		if ((c = add_of(b, VMS_ROP_GAUGE, (int32_t)i, col, col->group ? col->field : col->name)))
			c->scale = col->scale;
		return;
	}
	/* [vm.N.cg.]psi.R.some.total -> psi.R.%some: µs per s -> % */
	for (size_t k = 0; k < VMS_ARRAY_SIZE(psi_out) && col->unit == VMS_UNIT_US; k++)
		if (col->group == psi_out[k].group && strcmp(col->field, psi_out[k].field) == 0) {
			if ((c = add_of(b, VMS_ROP_PER_S, (int32_t)i, col, psi_out[k].out)))
				c->mul = 1e-4;
			return;
		}
	for (size_t k = 0; k < VMS_ARRAY_SIZE(renames) && col->group == VMS_G_STAT; k++)
		if (strcmp(col->field, renames[k].in) == 0) {
			add_of(b, VMS_ROP_PER_S, (int32_t)i, col, renames[k].out);
			return;
		}
	if ((c = add_per_s(b, i)))
		c->mul = vms_unscale(c->mul, col->scale);
}

int vms_rate_plan_new(const struct vms_schema *s, struct vms_rate_plan **out)
{
	struct vms_rate_plan *p = calloc(1, sizeof(*p));
	bool *done = calloc(s->ncols ? s->ncols : 1, sizeof(*done));
	struct builder b = {.p = p};
	int32_t f[DF_N]; /* the largest group */

	if (!p || !done) {
		free(p);
		free(done);
		return -ENOMEM;
	}
	p->schema = s;
	for (uint32_t i = 0; i < s->ncols && !b.err; i++) {
		if (done[i])
			continue;
		const struct vms_col *id = &s->cols[i];
		int fi;
		enum group_kind k = classify(id, &fi);
		if (k == G_NONE) {
			plan_single(&b, i);
			continue;
		}
		/* gather the entity's other fields (the first of each wins) */
		for (size_t x = 0; x < VMS_ARRAY_SIZE(f); x++)
			f[x] = -1;
		for (uint32_t j = i; j < s->ncols; j++) {
			int fj;
			if (done[j] || classify(&s->cols[j], &fj) != k || !same_entity(id, &s->cols[j]) || f[fj] >= 0)
				continue;
			f[fj] = (int32_t)j;
			done[j] = true;
		}
		if (k == G_CPU)
			plan_cpu(&b, id, f, strcmp(id->entity, "all") == 0);
		else if (k == G_DISK)
			plan_disk(&b, id, f);
		else if (k == G_NET)
			plan_net(&b, id, f);
		else
			plan_vm(&b, k, id, f);
	}
	free(done);
	if (!b.err)
		plan_vm_totals(&b);
	if (!b.err)
		plan_mem(&b);
	if (b.err) {
		vms_rate_plan_free(p);
		return b.err;
	}
	*out = p;
	return 0;
}

void vms_rate_plan_free(struct vms_rate_plan *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->ncols; i++) {
		free(p->cols[i].name);
		free(p->cols[i].xs);
	}
	free(p->cols);
	free(p->cpu);
	free(p);
}

int vms_rate_plan_renew(struct vms_rate_plan **plan, const struct vms_schema *s)
{
	struct vms_rate_plan *p;
	int e = vms_rate_plan_new(s, &p);
	if (e < 0)
		return e;
	vms_rate_plan_free(*plan);
	*plan = p;
	return 0;
}
