/* SPDX-License-Identifier: MIT */
/* report_gen.c - a synthetic run of a virtualization host as the sampler
 * records it, written with the sampler's own binary sink (sink_bin):
 * bench/report/run.sh measures `vmsampler report` on it, tests/test_report.c
 * checks the per-VM section on a small one, the Python plotting work reads
 * it.
 *
 *   report_gen [-n FRAMES] [-m VMS] [-i INTERVAL_MS] [-c CPUS] [-s SEED]
 *              [--vcpus K] [--no-events] [-t START_S] [--stop-frames K] [--perf] OUT.vms
 *
 * Defaults: 86,400 frames at 1000 ms (24 h), 60 VMs of 2 vCPUs, a host of
 * 32 CPUs with 4 disks and 3 interfaces: about 2,400 columns, named as the
 * sampler names them (procstat, loadavg, diskstats, netdev, the vm source's
 * per-VM columns with the VM's UUID as key, vms.parse_errors), in its
 * order, with its kinds, units, scales and wrap widths.
 *
 * Values are counters that grow plausibly (a daily load curve with noise:
 * CPU ticks that add up to HZ x CPUs x interval, guest time inside user
 * time, disk I/O with its sectors and ticks, packets and bytes, per-VM CPU,
 * vCPU run delay, taps and I/O), gauges that wander (load averages, tasks,
 * memory); the 32-bit disk tick counters wrap (one starts near 2^32);
 * balloon values come only every 60th frame per VM (staggered), as the
 * agent's slow path delivers them.  Unless --no-events, a few VMs stop and
 * start again during the run (VM_STOPPED / VM_STARTED events, a new schema
 * generation each time, and the restarted QEMU's counters start from 0)
 * and one new VM appears after a VM_DEFINED event.  Deterministic for a
 * seed.  -t: the first frame's wall time, seconds since the epoch (default
 * 2026-11-23T00:00:00Z; tests replay a run "now"); --stop-frames: how long
 * the first VM that stops stays stopped (default frames/100 + 1); --perf:
 * each VM also has the perf source's hardware counters, as `sources.perf.vm:
 * [instructions, cycles]` declares them (vm.<name>.perf.instructions,
 * cycles, hw_time_enabled, hw_time_running, every frame, never
 * multiplexed), cycles at 2.4 GHz of its CPU time and instructions at an
 * IPC of its own (0.5 to 2.1) with noise per interval: report --compare's
 * vm.ipc on a file that a host without a PMU cannot record.
 *
 * --interference P: the interference source's columns too (doc/
 * interference.md): per running VM vm.NAME.intf.{wait,vms,own,host,kernel,
 * unknown} and vm.NAME.intf.by.OTHER for the next P running VMs in the
 * list, an account within 1.5 % of the VM's vCPU run delay (which grows
 * by 5 % of each vCPU more), whose parts add up to wait exactly; a VM that
 * starts again starts its account from 0, and the other VMs' columns by it
 * start from 0 too while their vms goes on; MARK events "intf-a" and
 * "intf-b" at a quarter and three quarters of the run
 * (tests/test_report_intf.py).  With --intf-full too, every column the
 * two interference sources declare (tests/test_export_intf.py): the
 * source's eight, in its order (wait vms own host host_other kernel
 * unknown irq_est: irq_est 2 to 6 % of each interval's wait), the host
 * part split over five named cgroups, vm.NAME.intf.host.CGROUP (each VM
 * behind four of them, by their paths, "/" among them) and host_other,
 * which is the rest; and the estimate without BPF, vm.NAME.intfest.{wait,
 * vms,own,host,irq,unknown} (wait: the interval's vCPU run delay, whose
 * parts add up to it) and vm.NAME.intfest.by.OTHER for the same P VMs.
 * Prints the path and the number of frames and columns. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfmt.h"
#include "parse.h"
#include "ring.h"
#include "schema.h"
#include "sink.h"
#include "virt_proto.h"

#define HZ 100
#define MAXV 256
#define MAXVCPU 16
#define NDISK 4
#define NNET 3
#define NHCG 5 /* --intf-full: the host's named cgroups */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* uniform in [0, 1) */
static double unif(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

/* a non-negative integer near x (rounded at random: sums stay unbiased) */
static uint64_t near(double x)
{
	if (!(x > 0))
		return 0;
	double f = floor(x);
	return (uint64_t)f + (unif() < x - f);
}

struct vm {
	char name[32], uuid[40];
	bool running;
	unsigned nvcpu;
	double weight;  /* share of the guests' CPU */
	uint64_t cpu_time, cpu_user, cpu_system;
	uint64_t vt[MAXVCPU], vd[MAXVCPU], vs[MAXVCPU];
	uint64_t net[8]; /* rx_bytes rx_packets rx_errs rx_drop tx_bytes tx_packets tx_errs tx_drop */
	uint64_t io[2];
	uint64_t rss, cgmem;
	uint64_t perf[4]; /* instructions cycles hw_time_enabled hw_time_running */
	double ipc;
	uint64_t balloon[VMS_VM_NBALLOON];
	uint64_t state, path, slow_t;
	bool slow; /* this frame has its slow values */
	uint64_t intf[6]; /* wait vms own host kernel unknown (ns) */
	uint64_t by[MAXV]; /* behind VM j (ns) */
	/* --intf-full */
	uint64_t host_other, irq_est, hcg[NHCG]; /* behind the named cgroups */
	uint64_t est[6]; /* the estimate: wait vms own host irq unknown */
	uint64_t eby[MAXV];
};

static struct {
	unsigned ncpu, nvm, nvcpu;
	bool perf;
	unsigned intf_pairs; /* --interference P; 0: no interference columns */
	bool intf_full;      /* --intf-full */
	uint64_t cpu[10];
	uint64_t stat[6]; /* ctxt processes intr softirq procs_running procs_blocked */
	uint64_t load[5]; /* 1m 5m 15m (x100) runnable tasks */
	uint64_t disk[NDISK][VMS_DISK_FIELDS];
	uint64_t net[NNET][VMS_NET_FIELDS];
	uint64_t virt[3];
	uint64_t parse_errors;
	struct vm vm[MAXV];
} H;

static const char *const disk_names[NDISK] = {"nvme0n1", "nvme1n1", "sda", "dm-0"};
static const char *const net_names[NNET] = {"lo", "eno1", "br0"};
static const char *const hcg_names[NHCG] = {"system.slice/backup.service", "system.slice/cron.service",
					   "user.slice/user-1000.slice", "/", "machine.slice/ci-runner.scope"};
/* --intf-full: VM i waits behind named cgroup c (four of the five) */
static bool behind_cg(unsigned i, unsigned c)
{
	return (i + c) % NHCG != 0;
}
static const char *const stat_names[6] = {"ctxt", "processes", "intr", "softirq", "procs_running",
					  "procs_blocked"};

/* Columns: where each value comes from. */
struct colsrc {
	uint64_t *v;
	bool wrap32, slow;
	struct vm *vm; /* slow: whose */
};
static struct colsrc *cs;
static uint32_t ncs, capcs;

static void col(struct vms_schema_builder *b, const struct vms_coldef *d, uint64_t *v, struct vm *vm,
		bool slow, const char *fmt, ...) VMS_PRINTF(6, 7);
static void col_src(const struct vms_coldef *d, uint64_t *v, struct vm *vm, bool slow);

static void col(struct vms_schema_builder *b, const struct vms_coldef *d, uint64_t *v, struct vm *vm,
		bool slow, const char *fmt, ...)
{
	char name[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (vms_schema_addf(b, d, "%s", name) < 0) {
		fprintf(stderr, "report_gen: schema: %s\n", strerror(-b->err));
		exit(1);
	}
	col_src(d, v, vm, slow);
}

/* a column declared by its identity (as the perf source declares its own) */
static void col_id(struct vms_schema_builder *b, const struct vms_coldef *d, uint64_t *v, struct vm *vm,
		   unsigned group, const char *entity, const char *field)
{
	if (vms_schema_addc(b, d, group, entity, NULL, field) < 0) {
		fprintf(stderr, "report_gen: schema: %s\n", strerror(-b->err));
		exit(1);
	}
	col_src(d, v, vm, false);
}

static void col_src(const struct vms_coldef *d, uint64_t *v, struct vm *vm, bool slow)
{
	if (ncs == capcs) {
		capcs = capcs ? capcs * 2 : 1024;
		cs = realloc(cs, capcs * sizeof(*cs));
		if (!cs)
			exit(1);
	}
	cs[ncs++] = (struct colsrc){v, d->wrap_bits == 32, slow, vm};
}

#define CD(k, u, w) (&(struct vms_coldef){.kind = VMS_KIND_##k, .unit = VMS_UNIT_##u, .wrap_bits = w})

static struct vms_schema *declare(uint32_t gen, int64_t t_real)
{
	struct vms_schema_builder b;
	struct vms_schema *s;
	vms_schema_builder_init(&b);
	ncs = 0;
	vms_schema_builder_source(&b, 0);
	for (int k = 0; k < 10; k++)
		col(&b, CD(COUNTER, TICKS, 64), &H.cpu[k], NULL, false, "cpu.all.%s",
		    vms_stat_cpu_field_names[k]);
	for (int k = 0; k < 6; k++)
		col(&b, k < 4 ? CD(COUNTER, COUNT, 64) : CD(GAUGE, TASKS, 0), &H.stat[k], NULL, false,
		    "stat.%s", stat_names[k]);
	vms_schema_builder_source(&b, 1);
	static const char *const ln[5] = {"1m", "5m", "15m", "runnable", "tasks"};
	for (int k = 0; k < 5; k++) {
		struct vms_coldef d = {.kind = VMS_KIND_GAUGE, .unit = k < 3 ? VMS_UNIT_LOAD : VMS_UNIT_TASKS,
				       .scale = k < 3 ? 2 : 0};
		col(&b, &d, &H.load[k], NULL, false, "load.%s", ln[k]);
	}
	vms_schema_builder_source(&b, 2);
	for (int d = 0; d < NDISK; d++)
		for (int k = 0; k < VMS_DISK_FIELDS; k++) {
			bool ms = k == 3 || k == 7 || k == 9 || k == 10 || k == 14 || k == 16;
			bool sec = k == 2 || k == 6 || k == 13;
			const struct vms_coldef *def = k == 8 ? CD(GAUGE, COUNT, 0)
						       : ms  ? CD(COUNTER, MS, 32)
						       : sec ? CD(COUNTER, SECTORS, 64)
							     : CD(COUNTER, COUNT, 64);
			col(&b, def, &H.disk[d][k], NULL, false, "disk.%s.%s", disk_names[d],
			    vms_disk_field_names[k]);
		}
	vms_schema_builder_source(&b, 3);
	for (int n = 0; n < NNET; n++)
		for (int k = 0; k < VMS_NET_FIELDS; k++)
			col(&b, k == 0 || k == 8 ? CD(COUNTER, BYTES, 64) : CD(COUNTER, COUNT, 64), &H.net[n][k],
			    NULL, false, "net.%s.%s", net_names[n], vms_net_field_names[k]);
	vms_schema_builder_source(&b, 4);
	col(&b, CD(GAUGE, NONE, 0), &H.virt[0], NULL, false, "virt.connected");
	col(&b, CD(GAUGE, COUNT, 0), &H.virt[1], NULL, false, "virt.domains");
	col(&b, CD(COUNTER, COUNT, 64), &H.virt[2], NULL, false, "virt.agent_restarts");
	for (unsigned i = 0; i < H.nvm; i++) {
		struct vm *v = &H.vm[i];
		if (!v->running)
			continue;
		const char *n = v->name;
#define VF(f)                                                                                     \
	(&(struct vms_coldef){.kind = (f)->kind, .unit = (f)->unit,                                 \
			      .wrap_bits = (f)->kind == VMS_KIND_COUNTER ? 64 : 0, .key = v->uuid})
#define VD(info) VF(vms_vmetric_field(info))
#define VC(field) VF(vms_catalog_entry(VMS_G_VM, vms_catalog_field(VMS_G_VM, field)))
#define COL(info) vms_vmetric_field(info)->name
		col(&b, VC("state"), &v->state, v, false, "vm.%s.state", n);
		col(&b, VC("path"), &v->path, v, false, "vm.%s.path", n);
		uint64_t *cpu[3] = {&v->cpu_time, &v->cpu_user, &v->cpu_system};
		for (unsigned m = VMS_VM_CPU_TIME; m <= VMS_VM_CPU_SYSTEM; m++)
			col(&b, VD(vms_vmetric_find(m)), cpu[m - VMS_VM_CPU_TIME], v, false, "vm.%s.%s", n,
			    COL(vms_vmetric_find(m)));
		for (unsigned k = 0; k < v->nvcpu; k++) {
			uint64_t *vc[3] = {&v->vt[k], &v->vd[k], &v->vs[k]};
			for (unsigned m = VMS_VM_VCPU_TIME; m <= VMS_VM_VCPU_SLICES; m++)
				col(&b, VD(vms_vmetric_find(m)), vc[m - VMS_VM_VCPU_TIME], v, false, "vm.%s.vcpu%u.%s",
				    n, k, COL(vms_vmetric_find(m)));
		}
		for (unsigned m = VMS_VM_NET_RX_BYTES; m <= VMS_VM_NET_TX_DROP; m++)
			col(&b, VD(vms_vmetric_find(m)), &v->net[m - VMS_VM_NET_RX_BYTES], v, false,
			    "vm.%s.net.vnet%u.%s", n, i, COL(vms_vmetric_find(m)));
		for (unsigned m = VMS_VM_IO_READ; m <= VMS_VM_IO_WRITE; m++)
			col(&b, VD(vms_vmetric_find(m)), &v->io[m - VMS_VM_IO_READ], v, false, "vm.%s.io.%s", n,
			    COL(vms_vmetric_find(m)));
		col(&b, VD(vms_vmetric_find(VMS_VM_MEM_RSS)), &v->rss, v, false, "vm.%s.mem.rss", n);
		col(&b, VD(vms_vmetric_find(VMS_VM_MEM_CGROUP)), &v->cgmem, v, false, "vm.%s.mem.cgroup", n);
		for (unsigned k = 0; k < VMS_VM_NBALLOON; k++)
			col(&b, VD(&vms_vm_balloon[k]), &v->balloon[k], v, true, "vm.%s.balloon.%s", n,
			    COL(&vms_vm_balloon[k]));
		col(&b, VC("slow_t"), &v->slow_t, v, true, "vm.%s.slow_t", n);
#undef VF
#undef VD
#undef VC
#undef COL
	}
	for (unsigned i = 0; H.perf && i < H.nvm; i++) {
		struct vm *v = &H.vm[i];
		static const char *const pf[4] = {"instructions", "cycles", "hw_time_enabled", "hw_time_running"};
		if (!v->running)
			continue;
		vms_schema_builder_source(&b, 5);
		for (int k = 0; k < 4; k++) {
			struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = k < 2 ? VMS_UNIT_COUNT : VMS_UNIT_NS,
					       .wrap_bits = 64, .key = v->uuid};
			col_id(&b, &d, &v->perf[k], v, VMS_G_VMPERF, v->name, pf[k]);
		}
	}
	vms_schema_builder_source(&b, 6);
	for (unsigned i = 0; H.intf_pairs && i < H.nvm; i++) {
		struct vm *v = &H.vm[i];
		static const char *const f[8] = {"wait",   "vms",    "own",     "host",
						 "kernel", "unknown", "host_other", "irq_est"};
		uint64_t *fv[8] = {&v->intf[0], &v->intf[1], &v->intf[2], &v->intf[3],
				   &v->intf[4], &v->intf[5], &v->host_other, &v->irq_est};
		/* the source's order: wait vms own host host_other kernel unknown irq_est */
		static const unsigned full[8] = {0, 1, 2, 3, 6, 4, 5, 7};
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64, .key = v->uuid};
		if (!v->running)
			continue;
		for (unsigned k = 0; k < (H.intf_full ? 8u : 6u); k++) {
			unsigned x = H.intf_full ? full[k] : k;
			col(&b, &d, fv[x], v, false, "vm.%s.intf.%s", v->name, f[x]);
		}
		for (unsigned j = 1; j <= H.intf_pairs && j < H.nvm; j++) {
			struct vm *o = &H.vm[(i + j) % H.nvm];
			if (o->running)
				col(&b, &d, &v->by[o - H.vm], v, false, "vm.%s.intf.by.%s", v->name, o->name);
		}
		for (unsigned c = 0; H.intf_full && c < NHCG; c++)
			if (behind_cg(i, c))
				col_id(&b, &d, &v->hcg[c], v, VMS_G_VMINTFHOST, v->name, hcg_names[c]);
	}
	vms_schema_builder_source(&b, 7);
	for (unsigned i = 0; H.intf_full && i < H.nvm; i++) {
		struct vm *v = &H.vm[i];
		static const char *const f[6] = {"wait", "vms", "own", "host", "irq", "unknown"};
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64, .key = v->uuid};
		if (!v->running)
			continue;
		for (unsigned k = 0; k < 6; k++)
			col_id(&b, &d, &v->est[k], v, VMS_G_VMINTFEST, v->name, f[k]);
		for (unsigned j = 1; j <= H.intf_pairs && j < H.nvm; j++) {
			struct vm *o = &H.vm[(i + j) % H.nvm];
			if (o->running)
				col_id(&b, &d, &v->eby[o - H.vm], v, VMS_G_VMINTFESTBY, v->name, o->name);
		}
	}
	vms_schema_builder_source(&b, 6);
	col(&b, CD(COUNTER, COUNT, 64), &H.parse_errors, NULL, false, "vms.parse_errors");
	if (vms_schema_finish(&b, gen, t_real, &s) < 0) {
		fprintf(stderr, "report_gen: schema: %s\n", strerror(ENOMEM));
		exit(1);
	}
	vms_schema_builder_free(&b);
	return s;
}

static void vm_reset(struct vm *v)
{
	/* a new QEMU: its counters start from 0 */
	v->cpu_time = v->cpu_user = v->cpu_system = 0;
	memset(v->vt, 0, sizeof(v->vt));
	memset(v->vd, 0, sizeof(v->vd));
	memset(v->vs, 0, sizeof(v->vs));
	memset(v->net, 0, sizeof(v->net));
	memset(v->intf, 0, sizeof(v->intf));
	memset(v->by, 0, sizeof(v->by));
	/* the program dropped its entries as a culprit too */
	for (unsigned i = 0; i < H.nvm; i++)
		H.vm[i].by[v - H.vm] = 0;
	v->host_other = v->irq_est = 0;
	memset(v->hcg, 0, sizeof(v->hcg));
	/* the estimate's columns of a VM that comes back are new ones: from 0 */
	memset(v->est, 0, sizeof(v->est));
	memset(v->eby, 0, sizeof(v->eby));
	for (unsigned i = 0; i < H.nvm; i++)
		H.vm[i].eby[v - H.vm] = 0;
	memset(v->io, 0, sizeof(v->io));
	memset(v->perf, 0, sizeof(v->perf));
	v->rss = (uint64_t)(1 + next() % 8) << 30;
	v->balloon[0] = v->balloon[1] = (uint64_t)(2 + next() % 14) << 20; /* KiB */
}

static void init(void)
{
	for (int k = 0; k < 10; k++)
		H.cpu[k] = (uint64_t)H.ncpu * (1000 + next() % 100000);
	H.cpu[8] = H.cpu[0] / 2; /* guest inside user */
	H.cpu[9] = 0;
	H.stat[0] = 1000000000ull + next() % 1000000;
	H.stat[1] = 5000000 + next() % 1000;
	H.stat[2] = 800000000ull + next() % 1000000;
	H.stat[3] = 400000000ull + next() % 1000000;
	H.load[4] = 1200;
	for (int d = 0; d < NDISK; d++)
		for (int k = 0; k < VMS_DISK_FIELDS; k++)
			H.disk[d][k] = k == 8 ? 0 : next() % 1000000;
	/* one 32-bit tick counter starts just under its wrap */
	H.disk[0][10] = 4294967295u - 200000;
	for (int n = 0; n < NNET; n++)
		for (int k = 0; k < VMS_NET_FIELDS; k++)
			H.net[n][k] = k == 2 || k == 3 || (k > 4 && k < 8) || k > 10 ? 0 : next() % 100000000;
	H.virt[0] = 1;
	static const char *const role[] = {"web", "db", "cache", "build", "app", "mq"};
	for (unsigned i = 0; i < H.nvm; i++) {
		struct vm *v = &H.vm[i];
		snprintf(v->name, sizeof(v->name), "%s-%02u", role[i % 6], i + 1);
		snprintf(v->uuid, sizeof(v->uuid), "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)(next() >> 32),
			 (unsigned)(next() & 0xffff), (unsigned)(next() & 0xfff), (unsigned)(next() & 0xfff),
			 (unsigned long long)(next() & 0xffffffffffffull));
		v->nvcpu = H.nvcpu;
		v->weight = 0.2 + unif();
		v->ipc = H.perf ? 0.5 + 1.6 * unif() : 0;
		v->running = true;
		v->state = 1;
		v->path = 31;
		vm_reset(v);
	}
}

/* The interference account of VM v over an interval in which its vCPUs
 * waited dsum ns (schedstat): within 1.5 % of it, split over the next
 * intf_pairs running VMs (the first the largest), its own threads, the
 * host, the kernel and, now and then, unknown; the parts add up to wait. */
static void account(struct vm *v, uint64_t dsum, unsigned frame)
{
	double w = (double)dsum * (0.985 + 0.03 * unif());
	double fr[4] = {0.08, 0.12, 0.04, frame % 7 == 0 ? 0.005 : 0}; /* own host kernel unknown */
	double wt[MAXV], wsum = 0;
	unsigned i = (unsigned)(v - H.vm), np = 0;
	for (unsigned j = 1; j <= H.intf_pairs && j < H.nvm; j++) {
		const struct vm *o = &H.vm[(i + j) % H.nvm];
		wt[j] = o->running ? (double)(H.intf_pairs + 1 - j) * (0.5 + unif()) : 0;
		wsum += wt[j];
		np += o->running;
	}
	if (!np)
		fr[1] += 0.755; /* no neighbour: the host */
	uint64_t w0 = v->intf[0];
	for (unsigned k = 0; k < 4; k++) {
		uint64_t x = near(w * fr[k]);
		v->intf[2 + k] += x;
		v->intf[0] += x;
		/* the host part: over the named cgroups VM i waits behind, by
		 * weights of their own, and the rest in host_other */
		for (unsigned c = 0; H.intf_full && k == 1 && c < NHCG; c++) {
			uint64_t y = behind_cg(i, c) ? near((double)x * (0.3 - 0.05 * c) * unif()) : 0;
			y = y < x ? y : x;
			v->hcg[c] += y;
			x -= y;
		}
		if (H.intf_full && k == 1)
			v->host_other += x;
	}
	for (unsigned j = 1; np && j <= H.intf_pairs && j < H.nvm; j++) {
		uint64_t x = near(w * 0.755 * wt[j] / wsum);
		v->by[(i + j) % H.nvm] += x;
		v->intf[1] += x;
		v->intf[0] += x;
	}
	if (!H.intf_full)
		return;
	v->irq_est += near((double)(v->intf[0] - w0) * (0.02 + 0.04 * unif()));
	/* the estimate: the run delay itself, split (its parts add up) */
	double ef[4] = {0.1 + 0.05 * unif(), 0.1 + 0.1 * unif(), 0.03 + 0.03 * unif(), 0}; /* own host irq */
	uint64_t left = dsum;
	for (unsigned k = 0; k < 3; k++) {
		uint64_t x = near((double)dsum * ef[k]);
		x = x < left ? x : left;
		v->est[2 + k] += x;
		left -= x;
	}
	for (unsigned j = 1; np && j <= H.intf_pairs && j < H.nvm; j++) {
		uint64_t x = near((double)dsum * 0.7 * wt[j] / wsum * (0.8 + 0.4 * unif()));
		x = x < left ? x : left;
		v->eby[(i + j) % H.nvm] += x;
		v->est[1] += x;
		left -= x;
	}
	v->est[5] += left; /* unknown: what the split left */
	v->est[0] += dsum;
}

/* One interval of dt seconds at time t (seconds since the start). */
static void advance(double t, double dt, unsigned frame)
{
	/* a daily curve, peaking in the afternoon, with noise */
	double day = 0.5 + 0.35 * sin(2 * M_PI * (t / 86400.0 - 0.35)) + 0.1 * (unif() - 0.5);
	if (day < 0.02)
		day = 0.02;
	uint64_t total = near(HZ * H.ncpu * dt);
	double busy = 0.15 + 0.6 * day;
	uint64_t user = near(total * busy * 0.72), nice = near(total * 0.005),
		 sys = near(total * busy * 0.18), irq = near(total * busy * 0.01),
		 soft = near(total * busy * 0.03), iowait = near(total * 0.02 * unif()), steal = 0;
	uint64_t used = user + nice + sys + irq + soft + iowait + steal;
	if (used > total) {
		user -= used - total < user ? used - total : user;
		used = user + nice + sys + irq + soft + iowait + steal;
	}
	uint64_t guest = near(user * 0.85);
	uint64_t d[10] = {user, nice, sys, total - used, iowait, irq, soft, steal, guest, 0};
	for (int k = 0; k < 10; k++)
		H.cpu[k] += d[k];
	H.stat[0] += near(dt * (20000 + 40000 * day));
	H.stat[1] += near(dt * (5 + 20 * unif()));
	H.stat[2] += near(dt * (15000 + 25000 * day));
	H.stat[3] += near(dt * (8000 + 12000 * day));
	H.stat[4] = 1 + near(H.ncpu * busy * unif());
	H.stat[5] = next() % 5 == 0 ? next() % 3 : 0;
	/* load averages follow the runnable count as the kernel's EWMA */
	double run = (double)H.stat[4];
	static const double tau[3] = {60, 300, 900};
	for (int k = 0; k < 3; k++) {
		double l = (double)H.load[k] / 100, a = exp(-dt / tau[k]);
		H.load[k] = (uint64_t)floor((l * a + run * (1 - a)) * 100 + 0.5);
	}
	H.load[3] = H.stat[4];
	H.load[4] = 1200 + next() % 60;
	for (int n = 0; n < NDISK; n++) {
		uint64_t *x = H.disk[n];
		double scale = n == 3 ? 1.5 : n == 2 ? 0.2 : 1;
		uint64_t r = near(dt * scale * (200 + 1500 * day * unif())),
			 w = near(dt * scale * (100 + 900 * day * unif())), dc = near(dt * 2 * unif());
		x[0] += r;
		x[1] += near(r * 0.05);
		x[2] += r * (8 + next() % 56);
		x[3] += near(r * (0.1 + 0.4 * unif()));
		x[4] += w;
		x[5] += near(w * 0.2);
		x[6] += w * (8 + next() % 248);
		x[7] += near(w * (0.2 + 1.5 * unif()));
		x[8] = next() % 8;
		uint64_t busy_ms = near(dt * 1000 * (0.05 + 0.6 * day) * (n == 2 ? 0.2 : 1));
		x[9] += busy_ms;
		x[10] += near(busy_ms * (1 + 3 * unif()));
		x[11] += dc;
		x[12] += 0;
		x[13] += dc * 2048;
		x[14] += dc;
		x[15] += near(w * 0.1);
		x[16] += near(w * 0.05);
	}
	for (int n = 0; n < NNET; n++) {
		uint64_t *x = H.net[n];
		double scale = n == 0 ? 0.3 : n == 1 ? 1 : 0.8;
		uint64_t rp = near(dt * scale * (2000 + 30000 * day * unif())),
			 tp = near(dt * scale * (1500 + 25000 * day * unif()));
		x[0] += rp * (64 + next() % 1400);
		x[1] += rp;
		x[3] += next() % 1000 == 0;
		x[7] += near(dt * 0.5 * unif());
		x[8] += tp * (64 + next() % 1400);
		x[9] += tp;
	}
	/* the guests: CPU (guest ticks shared out), vCPU run delay, taps, I/O */
	double wsum = 0;
	for (unsigned i = 0; i < H.nvm; i++)
		if (H.vm[i].running)
			wsum += H.vm[i].weight;
	H.virt[1] = 0;
	for (unsigned i = 0; i < H.nvm; i++) {
		struct vm *v = &H.vm[i];
		if (!v->running)
			continue;
		H.virt[1]++;
		double share = wsum > 0 ? v->weight / wsum : 0;
		uint64_t g = near((double)guest * 1e7 * share * (0.8 + 0.4 * unif())); /* ticks -> ns */
		uint64_t cap = (uint64_t)(dt * 1e9) * v->nvcpu;
		if (g > cap)
			g = cap;
		uint64_t emu = near(dt * 1e9 * 0.01 * unif());
		v->cpu_time += g + emu;
		v->cpu_user += near((g + emu) * 0.9);
		v->cpu_system = v->cpu_time - v->cpu_user;
		uint64_t dsum = 0;
		for (unsigned k = 0; k < v->nvcpu; k++) {
			v->vt[k] += g / v->nvcpu;
			uint64_t dd = near(dt * 1e9 * 0.08 * day * day * unif());
			if (H.intf_pairs)
				dd += near(dt * 1e9 * 0.05 * (0.5 + unif()));
			v->vd[k] += dd;
			dsum += dd;
			v->vs[k] += near(dt * (50 + 1000 * day * unif()));
		}
		if (H.intf_pairs)
			account(v, dsum, frame);
		uint64_t rp = near(dt * (10 + 3000 * day * share * H.nvm * unif())),
			 tp = near(dt * (10 + 2500 * day * share * H.nvm * unif()));
		v->net[0] += rp * (64 + next() % 1400);
		v->net[1] += rp;
		v->net[3] += next() % 5000 == 0;
		v->net[4] += tp * (64 + next() % 1400);
		v->net[5] += tp;
		v->io[0] += near(dt * 4096 * (1 + 200 * day * unif()));
		v->io[1] += near(dt * 4096 * (1 + 100 * day * unif()));
		if (H.perf) {
			uint64_t cyc = near((double)(g + emu) * 2.4);
			v->perf[0] += near((double)cyc * v->ipc * (0.9 + 0.2 * unif()));
			v->perf[1] += cyc;
			v->perf[2] += (uint64_t)(dt * 1e9);
			v->perf[3] += (uint64_t)(dt * 1e9);
		}
		v->rss += (next() % 3) * 4096;
		v->cgmem = v->rss + ((uint64_t)64 << 20);
		/* the slow path: one frame in 60 for each VM */
		v->slow = (frame + i) % 60 == 0;
		v->path = v->slow ? 24607 : 31;
		if (v->slow) {
			uint64_t cur = v->balloon[0];
			if (next() % 10 == 0)
				cur = (v->balloon[1] >> 1) + next() % (v->balloon[1] >> 1);
			v->balloon[0] = cur;
			v->balloon[2] += next() % 3;
			v->balloon[3] += next() % 3;
			v->balloon[4] += next() % 5;
			v->balloon[5] += next() % 5000;
			v->balloon[6] = cur / 3;
			v->balloon[7] = cur - cur / 5;
			v->balloon[8] = cur / 2;
			v->balloon[10] = cur / 4;
			v->balloon[13] = v->rss >> 10;
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: report_gen [-n FRAMES] [-m VMS] [-i INTERVAL_MS] [-c CPUS] [-s SEED]\n"
			"                  [--vcpus K] [--no-events] [-t START_S] [--stop-frames K] [--perf]\n"
			"                  [--interference P [--intf-full]] OUT.vms\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long frames = 86400, vms = 60, iv_ms = 1000, cpus = 32, vcpus = 2, seed = 1, start_s = 1795392000,
		      stop_frames = 0, pairs = 0;
	bool events = true;
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		unsigned long *p = NULL;
		if (!strcmp(argv[i], "-n"))
			p = &frames;
		else if (!strcmp(argv[i], "-m"))
			p = &vms;
		else if (!strcmp(argv[i], "-i"))
			p = &iv_ms;
		else if (!strcmp(argv[i], "-c"))
			p = &cpus;
		else if (!strcmp(argv[i], "-s"))
			p = &seed;
		else if (!strcmp(argv[i], "--vcpus"))
			p = &vcpus;
		else if (!strcmp(argv[i], "-t"))
			p = &start_s;
		else if (!strcmp(argv[i], "--stop-frames"))
			p = &stop_frames;
		else if (!strcmp(argv[i], "--interference"))
			p = &pairs;
		else if (!strcmp(argv[i], "--no-events"))
			events = false;
		else if (!strcmp(argv[i], "--perf"))
			H.perf = true;
		else if (!strcmp(argv[i], "--intf-full"))
			H.intf_full = true;
		else if (argv[i][0] == '-' || out)
			usage();
		else
			out = argv[i];
		if (p) {
			char *e;
			if (++i >= argc)
				usage();
			*p = strtoul(argv[i], &e, 10);
			if (*e || !*argv[i])
				usage();
		}
	}
	if (!out || frames < 2 || vms > MAXV - 1 || !iv_ms || !cpus || !vcpus || vcpus > MAXVCPU ||
	    (H.intf_full && !pairs))
		usage();
	rng ^= seed * 0x2545F4914F6CDD1Dull;
	H.ncpu = (unsigned)cpus;
	H.nvm = (unsigned)vms;
	H.nvcpu = (unsigned)vcpus;
	H.intf_pairs = pairs < MAXV ? (unsigned)pairs : MAXV - 1;
	init();

	struct vms_sink s = {.ops = &vms_sink_bin, .path = out, .force = true};
	s.priv = calloc(1, vms_sink_bin.priv_size);
	int r = s.priv ? vms_sink_bin.open(&s) : -ENOMEM;
	if (r < 0) {
		fprintf(stderr, "report_gen: %s: %s\n", out, strerror(-r));
		return 1;
	}
	const int64_t t0_real = (int64_t)start_s * 1000000000LL; /* default 2026-11-23T00:00:00Z */
	const uint64_t t0_mono = 1000ull * 1000000000ull;
	const uint64_t iv = iv_ms * 1000000ull;
	/* the events: three VMs stop for a while and start again, one is
	 * defined and started late (its slot was kept free) */
	unsigned newvm = H.nvm;
	if (events && H.nvm) {
		struct vm *v = &H.vm[newvm];
		snprintf(v->name, sizeof(v->name), "late-%02u", newvm + 1);
		snprintf(v->uuid, sizeof(v->uuid), "0e0e0e0e-0000-4000-8000-%012u", newvm + 1);
		v->nvcpu = H.nvcpu;
		v->weight = 1;
		v->ipc = 1.2;
		v->state = 1;
		v->path = 31;
		H.nvm++;
	}
	struct gev {
		unsigned long frame;
		unsigned vm;
		uint32_t type;
	} evs[8];
	unsigned nev = 0;
	if (events && vms >= 3) {
		unsigned long f = frames;
		evs[nev++] = (struct gev){f * 2 / 10, 1, VMS_EV_VM_STOPPED};
		evs[nev++] = (struct gev){f * 2 / 10 + (stop_frames ? stop_frames : f / 100 + 1), 1, VMS_EV_VM_STARTED};
		evs[nev++] = (struct gev){f * 5 / 10, 2, VMS_EV_VM_STOPPED};
		evs[nev++] = (struct gev){f * 5 / 10 + f / 50 + 1, 2, VMS_EV_VM_STARTED};
		evs[nev++] = (struct gev){f * 6 / 10, newvm, VMS_EV_VM_DEFINED};
		evs[nev++] = (struct gev){f * 6 / 10, newvm, VMS_EV_VM_STARTED};
		evs[nev++] = (struct gev){f * 8 / 10, 0, VMS_EV_VM_STOPPED};
		evs[nev++] = (struct gev){f * 8 / 10 + 3, 0, VMS_EV_VM_STARTED};
	}

	struct vms_schema *sch = NULL;
	struct vms_frame *f = NULL;
	uint32_t gen = 0;
	bool changed = true;
	unsigned e = 0;
	for (unsigned long k = 0; k < frames; k++) {
		uint64_t t_mono = t0_mono + k * iv + 20000 + next() % 400000; /* a little late */
		int64_t t_real = t0_real + (int64_t)(t_mono - t0_mono);
		for (; e < nev && evs[e].frame == k; e++) {
			struct vm *v = &H.vm[evs[e].vm];
			struct vms_event ev = {.type = evs[e].type, .gen = gen + 1, .before_seq = k + 1,
					       .t_mono_ns = t_mono - 1000, .t_real_ns = t_real - 1000};
			snprintf(ev.subject, sizeof(ev.subject), "%s", v->uuid);
			snprintf(ev.detail, sizeof(ev.detail), "%s", v->name);
			if (evs[e].type == VMS_EV_VM_STOPPED) {
				v->running = false;
			} else if (evs[e].type == VMS_EV_VM_STARTED) {
				v->running = true;
				vm_reset(v);
			}
			changed = true;
			if ((r = vms_sink_bin.event(&s, &ev)) < 0)
				break;
		}
		if (H.intf_pairs && (k == frames / 4 || k == frames * 3 / 4)) {
			struct vms_event ev = {.type = VMS_EV_MARK, .gen = gen, .before_seq = k + 1,
					       .t_mono_ns = t_mono - 500, .t_real_ns = t_real - 500};
			snprintf(ev.subject, sizeof(ev.subject), "%s", k == frames / 4 ? "intf-a" : "intf-b");
			if ((r = vms_sink_bin.event(&s, &ev)) < 0)
				break;
		}
		if (k)
			advance((double)k * iv_ms / 1000.0, (double)iv_ms / 1000.0, (unsigned)k);
		if (changed) {
			if (sch)
				vms_schema_unref(sch);
			sch = declare(++gen, t_real);
			free(f);
			f = calloc(1, vms_frame_size(sch->ncols));
			if (!f)
				return 1;
			if ((r = vms_sink_bin.begin(&s, sch)) < 0)
				break;
		}
		f->seq = k + 1;
		f->t_mono_ns = t_mono;
		f->t_real_ns = t_real;
		f->gen = gen;
		f->flags = changed ? VMS_FRAME_NEWGEN : 0;
		f->late_ns = t_mono - (t0_mono + k * iv);
		f->self_cpu_ns = 30000 + next() % 20000;
		f->ncols = sch->ncols;
		for (struct vm *v = H.vm; v < H.vm + H.nvm; v++)
			if (v->slow)
				v->slow_t = (uint64_t)t_real - 300000000ull;
		for (uint32_t i = 0; i < ncs; i++) {
			const struct colsrc *c = &cs[i];
			if (c->slow && !c->vm->slow)
				f->v[i] = VMS_NONE;
			else if (c->wrap32)
				f->v[i] = *c->v & 0xffffffffu;
			else
				f->v[i] = *c->v;
		}
		changed = false;
		while ((r = vms_sink_bin.write(&s, sch, f)) == -EAGAIN)
			if ((r = vms_sink_bin.flush(&s)) < 0 && r != -EAGAIN)
				break;
		if (r < 0)
			break;
	}
	int c = vms_sink_bin.close(&s);
	if (r >= 0)
		r = c;
	if (r < 0) {
		fprintf(stderr, "report_gen: %s: %s\n", out, strerror(-r));
		return 1;
	}
	printf("%s %lu frames %u columns\n", out, frames, sch ? sch->ncols : 0);
	vms_schema_unref(sch);
	free(f);
	free(cs);
	free(s.priv);
	return 0;
}
