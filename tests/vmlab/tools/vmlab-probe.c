/*
 * vmlab-probe - compare what libvirt reports for a domain with the host files
 * the vmsampler agent could read directly, read within microseconds of each other.
 *
 *   vmlab-probe [options] GROUP DOMAIN...
 *     GROUP: cpu | vcpu | net | block | mem
 *   vmlab-probe [options] bench GROUPS CALLS
 *     GROUPS: comma list of state,cpu,vcpu,net,block,balloon or "all"
 *
 * Options:
 *   -c URI      libvirt URI (default qemu:///system)
 *   -n ROUNDS   rounds per domain (default 3), -i MS between rounds (default 300)
 *   -f MODE     freeze the guest during the read: none (default) | stop (SIGSTOP
 *               the QEMU process; only for "net", the one group here for which
 *               libvirt 9.0 does not ask QEMU - cpu-total does, for cpu.haltpoll.*)
 *               | suspend (virDomainSuspend: vCPUs paused, QEMU still answers)
 *   -w          bench: pass VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT
 *
 * Each round reads the host files (A), calls virDomainListGetStats for that one
 * domain (L), reads the host files again (B), and prints for every pair
 *   key  libvirt=L  file=A..B  verdict
 * where every file value is first converted into libvirt's unit, and the verdict is
 * "==A" / "==B" (exactly equal to a read), "in[A,B]" (between the two reads, the
 * counter moved), or "DIFF L-A=..." (neither).
 *
 * Build: gcc -O2 -o vmlab-probe vmlab-probe.c $(pkg-config --cflags --libs libvirt)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#define MAXP 64
#define UNIFIED "/sys/fs/cgroup/unified"

struct pair {
	char key[64];   /* libvirt stats key, e.g. "cpu.time" */
	char src[160];  /* where the file value came from, with conversion */
	unsigned long long a, b, lv;
	int have_a, have_b, have_lv;
};

struct dom {
	const char *name;
	virDomainPtr d;
	int pid;
	char cg2[512];          /* unified cgroup dir of the domain (no /emulator) */
	char cg1_cpuacct[512];  /* v1 cpuacct dir the main thread is in */
	char cg1_memory[512];   /* v1 memory dir */
	char tap[32];
	int nvcpu;
	int vcpu_tid[16];
	struct pair p[MAXP];
	int np;
};

static long clk_tck, page_kib;

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "vmlab-probe: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return (int)n;
}

/* value of "KEY<sep>NUMBER" inside a file like cpu.stat / cpuacct.stat / io */
static int file_key(const char *path, const char *key, unsigned long long *v)
{
	char buf[16384], *p;
	size_t kl = strlen(key);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && (p[kl] == ' ' || p[kl] == ':')) {
			p += kl;
			while (*p == ' ' || *p == ':')
				p++;
			*v = strtoull(p, NULL, 10);
			return 0;
		}
	}
	return -1;
}

static int file_u64(const char *path, unsigned long long *v)
{
	char buf[128];
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	*v = strtoull(buf, NULL, 10);
	return 0;
}

/* field N (1-based) of a whitespace separated file */
static int file_field(const char *path, int n, unsigned long long *v)
{
	char buf[4096], *p = buf, *save = NULL, *tok;
	int i = 0;
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	/* /proc/.../stat: skip "pid (comm)" which may contain spaces */
	if (strstr(path, "/stat") && !strstr(path, "statm") && !strstr(path, "schedstat")) {
		char *r = strrchr(buf, ')');
		if (!r)
			return -1;
		p = r + 2;
		i = 2;
	}
	for (tok = strtok_r(p, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (++i == n) {
			*v = strtoull(tok, NULL, 10);
			return 0;
		}
	return -1;
}

/* /proc/sched's "se.statistics.wait_sum : 123.456789" (ms) -> ns */
static int sched_wait_ns(const char *path, unsigned long long *v)
{
	char buf[16384], *p;
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "se.statistics.wait_sum");
	if (!p)
		p = strstr(buf, "se.wait_sum");
	if (!p || !(p = strchr(p, ':')))
		return -1;
	*v = (unsigned long long)(strtod(p + 1, NULL) * 1000000);
	return 0;
}

/* /proc/net/dev line of IFACE: field 1 = rx bytes, 2 rx packets, 3 rx errs, 4 rx drop,
 * 9 tx bytes, 10 tx packets, 11 tx errs, 12 tx drop */
static int netdev_field(const char *iface, int n, unsigned long long *v)
{
	char buf[65536], *line, *save = NULL;
	size_t il = strlen(iface);
	if (read_file("/proc/net/dev", buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *tok, *s2 = NULL;
		int i = 0;
		while (*p == ' ')
			p++;
		if (strncmp(p, iface, il) || p[il] != ':')
			continue;
		for (tok = strtok_r(p + il + 1, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2))
			if (++i == n) {
				*v = strtoull(tok, NULL, 10);
				return 0;
			}
	}
	return -1;
}

/* record one file value (already in libvirt units) for phase 0 (A) or 1 (B) */
static void put(struct dom *d, int phase, const char *key, const char *src, int ok,
		unsigned long long v)
{
	struct pair *p = NULL;
	int i;
	for (i = 0; i < d->np; i++)
		if (!strcmp(d->p[i].key, key) && !strcmp(d->p[i].src, src))
			p = &d->p[i];
	if (!p) {
		if (d->np == MAXP)
			die("too many pairs");
		p = &d->p[d->np++];
		memset(p, 0, sizeof(*p));
		snprintf(p->key, sizeof(p->key), "%s", key);
		snprintf(p->src, sizeof(p->src), "%s", src);
	}
	if (!ok)
		return;
	if (phase == 0) {
		p->a = v;
		p->have_a = 1;
	} else {
		p->b = v;
		p->have_b = 1;
	}
}

static void read_cpu(struct dom *d, int phase)
{
	char path[700];
	unsigned long long v;
	int ok;
	static const char *kids[] = { "emulator", "vcpu0", "vcpu1", "vcpu2", "vcpu3" };
	unsigned long long sum = 0;
	size_t k;

	snprintf(path, sizeof(path), "%s/cpu.stat", d->cg2);
	ok = file_key(path, "usage_usec", &v) == 0;
	put(d, phase, "cpu.time", "cgroup2 <dom>/cpu.stat usage_usec*1000", ok, v * 1000);
	ok = file_key(path, "user_usec", &v) == 0;
	put(d, phase, "cpu.user", "cgroup2 <dom>/cpu.stat user_usec*1000", ok, v * 1000);
	ok = file_key(path, "system_usec", &v) == 0;
	put(d, phase, "cpu.system", "cgroup2 <dom>/cpu.stat system_usec*1000", ok, v * 1000);
	for (k = 0; k < sizeof(kids) / sizeof(kids[0]); k++) {
		snprintf(path, sizeof(path), "%s/%s/cpu.stat", d->cg2, kids[k]);
		if (file_key(path, "usage_usec", &v) == 0)
			sum += v * 1000;
	}
	put(d, phase, "cpu.time", "cgroup2 sum(emulator,vcpuN)/cpu.stat usage_usec*1000", 1, sum);
	snprintf(path, sizeof(path), "%s/cpuacct.usage", d->cg1_cpuacct);
	ok = file_u64(path, &v) == 0;
	put(d, phase, "cpu.time", "cgroup1 cpuacct.usage of the process's cpuacct cgroup", ok, v);
	snprintf(path, sizeof(path), "%s/cpuacct.stat", d->cg1_cpuacct);
	ok = file_key(path, "user", &v) == 0;
	put(d, phase, "cpu.user", "cgroup1 cpuacct.stat user*1e9/USER_HZ", ok, v * (1000000000ULL / clk_tck));
	/* whole process: utime+stime of /proc/PID/stat (USER_HZ) */
	{
		unsigned long long ut = 0, st = 0;
		snprintf(path, sizeof(path), "/proc/%d/stat", d->pid);
		ok = file_field(path, 14, &ut) == 0 && file_field(path, 15, &st) == 0;
		put(d, phase, "cpu.time", "/proc/PID/stat (utime+stime)*1e9/USER_HZ", ok,
		    (ut + st) * (1000000000ULL / clk_tck));
		snprintf(path, sizeof(path), "/proc/%d/schedstat", d->pid);
		ok = file_field(path, 1, &v) == 0;
		put(d, phase, "cpu.time", "/proc/PID/schedstat field1 (main thread only)", ok, v);
	}
}

static void read_vcpu(struct dom *d, int phase)
{
	char path[700], key[64];
	unsigned long long v, ut, st;
	int i, ok;
	for (i = 0; i < d->nvcpu; i++) {
		int tid = d->vcpu_tid[i];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", d->pid, tid);
		snprintf(key, sizeof(key), "vcpu.%d.time", i);
		ok = file_field(path, 1, &v) == 0;
		put(d, phase, key, "task schedstat f1 run_ns", ok, v);
		snprintf(key, sizeof(key), "vcpu.%d.delay", i);
		ok = file_field(path, 2, &v) == 0;
		put(d, phase, key, "task schedstat f2 wait_ns", ok, v);
		snprintf(key, sizeof(key), "vcpu.%d.time", i);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", d->pid, tid);
		ok = file_field(path, 14, &ut) == 0 && file_field(path, 15, &st) == 0;
		put(d, phase, key, "task stat (utime+stime)*1e9/USER_HZ", ok, (ut + st) * (1000000000ULL / clk_tck));
		snprintf(key, sizeof(key), "vcpu.%d.wait", i);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", d->pid, tid);
		ok = sched_wait_ns(path, &v) == 0;
		put(d, phase, key, "task sched se.statistics.wait_sum ms*1e6", ok, v);
		snprintf(path, sizeof(path), "%s/vcpu%d/cpu.stat", d->cg2, i);
		snprintf(key, sizeof(key), "vcpu.%d.time", i);
		ok = file_key(path, "usage_usec", &v) == 0;
		put(d, phase, key, "cgroup2 vcpuN/cpu.stat usage_usec*1000", ok, v * 1000);
	}
}

static void read_net(struct dom *d, int phase)
{
	static const struct { const char *key; int field; } m[] = {
		{ "net.0.rx.bytes", 9 }, { "net.0.rx.pkts", 10 }, { "net.0.rx.errs", 11 }, { "net.0.rx.drop", 12 },
		{ "net.0.tx.bytes", 1 }, { "net.0.tx.pkts", 2 }, { "net.0.tx.errs", 3 }, { "net.0.tx.drop", 4 },
	};
	char src[96];
	unsigned long long v;
	size_t i;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		int ok = netdev_field(d->tap, m[i].field, &v) == 0;
		snprintf(src, sizeof(src), "/proc/net/dev %s %s field %d", d->tap, m[i].field < 9 ? "RX" : "TX",
			 m[i].field < 9 ? m[i].field : m[i].field - 8);
		put(d, phase, m[i].key, src, ok, v);
	}
}

static void read_block(struct dom *d, int phase)
{
	char path[64];
	unsigned long long v;
	int ok;
	snprintf(path, sizeof(path), "/proc/%d/io", d->pid);
	ok = file_key(path, "read_bytes", &v) == 0;
	put(d, phase, "block.0.rd.bytes", "/proc/PID/io read_bytes", ok, v);
	ok = file_key(path, "write_bytes", &v) == 0;
	put(d, phase, "block.0.wr.bytes", "/proc/PID/io write_bytes", ok, v);
	ok = file_key(path, "rchar", &v) == 0;
	put(d, phase, "block.0.rd.bytes", "/proc/PID/io rchar", ok, v);
	ok = file_key(path, "wchar", &v) == 0;
	put(d, phase, "block.0.wr.bytes", "/proc/PID/io wchar", ok, v);
	ok = file_key(path, "syscr", &v) == 0;
	put(d, phase, "block.0.rd.reqs", "/proc/PID/io syscr", ok, v);
	ok = file_key(path, "syscw", &v) == 0;
	put(d, phase, "block.0.wr.reqs", "/proc/PID/io syscw", ok, v);
}

static void read_mem(struct dom *d, int phase)
{
	char path[700];
	unsigned long long v;
	int ok;
	snprintf(path, sizeof(path), "/proc/%d/statm", d->pid);
	ok = file_field(path, 2, &v) == 0;
	put(d, phase, "balloon.rss", "/proc/PID/statm resident*pagesize/1024", ok, v * page_kib);
	snprintf(path, sizeof(path), "/proc/%d/stat", d->pid);
	ok = file_field(path, 24, &v) == 0;
	put(d, phase, "balloon.rss", "/proc/PID/stat rss*pagesize/1024", ok, v * page_kib);
	snprintf(path, sizeof(path), "/proc/%d/status", d->pid);
	ok = file_key(path, "VmRSS", &v) == 0;
	put(d, phase, "balloon.rss", "/proc/PID/status VmRSS (kB)", ok, v);
	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", d->cg1_memory);
	ok = file_u64(path, &v) == 0;
	put(d, phase, "balloon.rss", "cgroup1 memory.usage_in_bytes/1024", ok, v / 1024);
	snprintf(path, sizeof(path), "%s/memory.stat", d->cg1_memory);
	ok = file_key(path, "rss", &v) == 0;
	put(d, phase, "balloon.rss", "cgroup1 memory.stat rss/1024", ok, v / 1024);
	snprintf(path, sizeof(path), "%s/memory.current", d->cg2);
	ok = file_u64(path, &v) == 0;
	put(d, phase, "balloon.rss", "cgroup2 memory.current/1024", ok, v / 1024);
}

struct group {
	const char *name;
	unsigned int stats;
	void (*read)(struct dom *, int);
	int needs_qemu;   /* libvirt talks to the QEMU monitor for this group */
};

static const struct group groups[] = {
	{ "cpu", VIR_DOMAIN_STATS_CPU_TOTAL, read_cpu, 1 },  /* 9.0: cpu.haltpoll.* via query-stats */
	{ "vcpu", VIR_DOMAIN_STATS_VCPU, read_vcpu, 1 },
	{ "net", VIR_DOMAIN_STATS_INTERFACE, read_net, 0 },
	{ "block", VIR_DOMAIN_STATS_BLOCK, read_block, 1 },
	{ "mem", VIR_DOMAIN_STATS_BALLOON, read_mem, 1 },
};

static int param_u64(virTypedParameterPtr p, unsigned long long *v)
{
	switch (p->type) {
	case VIR_TYPED_PARAM_INT: *v = (unsigned long long)p->value.i; return 0;
	case VIR_TYPED_PARAM_UINT: *v = p->value.ui; return 0;
	case VIR_TYPED_PARAM_LLONG: *v = (unsigned long long)p->value.l; return 0;
	case VIR_TYPED_PARAM_ULLONG: *v = p->value.ul; return 0;
	default: return -1;
	}
}

static virDomainStatsRecordPtr *get_stats(struct dom *d, unsigned int stats)
{
	virDomainPtr list[2] = { d->d, NULL };
	virDomainStatsRecordPtr *rec = NULL;
	if (virDomainListGetStats(list, stats, &rec, 0) != 1) {
		virErrorPtr e = virGetLastError();
		die("virDomainListGetStats(%s): %s", d->name, e ? e->message : "?");
	}
	return rec;
}

static void setup_dom(virConnectPtr conn, struct dom *d)
{
	char path[1024], buf[4096], *line, *save = NULL;
	DIR *dir;
	struct dirent *de;
	virDomainStatsRecordPtr *rec;
	int i;

	if (!(d->d = virDomainLookupByName(conn, d->name)))
		die("no domain %s", d->name);
	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", d->name);
	if (read_file(path, buf, sizeof(buf)) < 0)
		die("cannot read %s", path);
	d->pid = atoi(buf);

	snprintf(path, sizeof(path), "/proc/%d/cgroup", d->pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		die("cannot read %s", path);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c = strchr(line, ':'), *p;
		if (!c || !(p = strchr(c + 1, ':')))
			continue;
		*p++ = 0;
		c++;
		if (!*c) {  /* "0::/machine/qemu-N-NAME.libvirt-qemu/emulator" */
			char *e = strstr(p, "/emulator");
			if (e)
				*e = 0;
			snprintf(d->cg2, sizeof(d->cg2), "%s%s", UNIFIED, p);
		} else if (!strcmp(c, "cpuacct") || !strcmp(c, "cpu,cpuacct")) {
			snprintf(d->cg1_cpuacct, sizeof(d->cg1_cpuacct), "/sys/fs/cgroup/%s%s", c, p);
		} else if (!strcmp(c, "memory")) {
			snprintf(d->cg1_memory, sizeof(d->cg1_memory), "/sys/fs/cgroup/memory%s", p);
		}
	}

	/* vCPU threads: QEMU names them "CPU <n>/TCG" (or "/KVM") with debug-threads=on */
	snprintf(path, sizeof(path), "/proc/%d/task", d->pid);
	if (!(dir = opendir(path)))
		die("cannot open %s", path);
	while ((de = readdir(dir))) {
		int n;
		char comm[64];
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", d->pid, de->d_name);
		if (read_file(path, comm, sizeof(comm)) > 0 && sscanf(comm, "CPU %d/", &n) == 1 && n < 16) {
			d->vcpu_tid[n] = atoi(de->d_name);
			if (n + 1 > d->nvcpu)
				d->nvcpu = n + 1;
		}
	}
	closedir(dir);

	rec = get_stats(d, VIR_DOMAIN_STATS_INTERFACE);
	for (i = 0; i < rec[0]->nparams; i++)
		if (!strcmp(rec[0]->params[i].field, "net.0.name") && rec[0]->params[i].type == VIR_TYPED_PARAM_STRING)
			snprintf(d->tap, sizeof(d->tap), "%s", rec[0]->params[i].value.s);
	virDomainStatsRecordListFree(rec);
}

static void wait_stopped(int pid)
{
	char path[1024], buf[512];
	int tries;
	for (tries = 0; tries < 1000; tries++) {
		DIR *dir;
		struct dirent *de;
		int running = 0;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		if (!(dir = opendir(path)))
			return;
		while ((de = readdir(dir))) {
			char *r;
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, de->d_name);
			if (read_file(path, buf, sizeof(buf)) > 0 && (r = strrchr(buf, ')')) && r[2] != 'T' && r[2] != 't')
				running++;
		}
		closedir(dir);
		if (!running)
			return;
		usleep(1000);
	}
	die("pid %d did not stop", pid);
}

static void round_one(struct dom *d, const struct group *g, const char *freeze, int round)
{
	virDomainStatsRecordPtr *rec;
	double t0, t1, t2, t3;
	int i, j;

	if (!strcmp(freeze, "stop")) {
		kill(d->pid, SIGSTOP);
		wait_stopped(d->pid);
	} else if (!strcmp(freeze, "suspend")) {
		if (virDomainSuspend(d->d) < 0)
			die("suspend %s failed", d->name);
		usleep(200000);
	}
	for (i = 0; i < d->np; i++)
		d->p[i].have_a = d->p[i].have_b = d->p[i].have_lv = 0;
	t0 = now_us();
	g->read(d, 0);
	t1 = now_us();
	rec = get_stats(d, g->stats);
	t2 = now_us();
	g->read(d, 1);
	t3 = now_us();
	if (!strcmp(freeze, "stop"))
		kill(d->pid, SIGCONT);
	else if (!strcmp(freeze, "suspend"))
		virDomainResume(d->d);

	for (i = 0; i < d->np; i++)
		for (j = 0; j < rec[0]->nparams; j++)
			if (!strcmp(rec[0]->params[j].field, d->p[i].key) &&
			    param_u64(&rec[0]->params[j], &d->p[i].lv) == 0)
				d->p[i].have_lv = 1;
	printf("%s round %d freeze=%s pid=%d: files A %.0f us, libvirt call %.0f us, files B %.0f us (A..B span %.0f us)\n",
	       d->name, round, freeze, d->pid, t1 - t0, t2 - t1, t3 - t2, t3 - t0);
	for (i = 0; i < d->np; i++) {
		struct pair *p = &d->p[i];
		char verdict[96];
		if (!p->have_lv || !p->have_a || !p->have_b) {
			printf("  %-17s %-58s libvirt=%s file=%s\n", p->key, p->src,
			       p->have_lv ? "yes" : "MISSING", p->have_a && p->have_b ? "yes" : "MISSING");
			continue;
		}
		if (p->lv == p->a && p->lv == p->b)
			snprintf(verdict, sizeof(verdict), "EQUAL (A==B==L)");
		else if (p->lv == p->a)
			snprintf(verdict, sizeof(verdict), "EQUAL to A");
		else if (p->lv == p->b)
			snprintf(verdict, sizeof(verdict), "EQUAL to B");
		else if (p->a <= p->lv && p->lv <= p->b)
			snprintf(verdict, sizeof(verdict), "within [A,B]");
		else
			snprintf(verdict, sizeof(verdict), "DIFF L-A=%lld L-B=%lld",
				 (long long)(p->lv - p->a), (long long)(p->lv - p->b));
		printf("  %-17s %-58s L=%llu A=%llu B=%llu  %s\n", p->key, p->src, p->lv, p->a, p->b, verdict);
	}
	virDomainStatsRecordListFree(rec);
}

/* bench: N calls of virConnectGetAllDomainStats; wall per call and libvirtd CPU */
static unsigned int parse_groups(const char *s)
{
	unsigned int m = 0;
	char *dup = strdup(s), *tok, *save = NULL;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) m |= 0;
		else if (!strcmp(tok, "state")) m |= VIR_DOMAIN_STATS_STATE;
		else if (!strcmp(tok, "cpu")) m |= VIR_DOMAIN_STATS_CPU_TOTAL;
		else if (!strcmp(tok, "vcpu")) m |= VIR_DOMAIN_STATS_VCPU;
		else if (!strcmp(tok, "net")) m |= VIR_DOMAIN_STATS_INTERFACE;
		else if (!strcmp(tok, "block")) m |= VIR_DOMAIN_STATS_BLOCK;
		else if (!strcmp(tok, "balloon")) m |= VIR_DOMAIN_STATS_BALLOON;
		else die("unknown group %s", tok);
	}
	free(dup);
	return m;
}

static unsigned long long proc_cpu_ns(int pid)
{
	char path[64];
	unsigned long long ut = 0, st = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (file_field(path, 14, &ut) || file_field(path, 15, &st))
		return 0;
	return (ut + st) * (1000000000ULL / clk_tck);
}

static void bench(virConnectPtr conn, const char *groups_s, int calls, int nowait)
{
	unsigned int stats = parse_groups(groups_s);
	unsigned int flags = nowait ? VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT : 0;
	char buf[64];
	int lpid = 0, i, n = 0, params = 0;
	double t0, t1, mn = 1e18, mx = 0;
	unsigned long long c0, c1;
	struct timespec s0, s1;
	const char *pf = getenv("VMLAB_PIDFILE");

	if (read_file(pf ? pf : "/run/vmsampler-vmlab-libvirtd.pid", buf, sizeof(buf)) > 0)
		lpid = atoi(buf);
	c0 = lpid ? proc_cpu_ns(lpid) : 0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s0);
	t0 = now_us();
	for (i = 0; i < calls; i++) {
		virDomainStatsRecordPtr *rec = NULL;
		double a = now_us(), b;
		int r = virConnectGetAllDomainStats(conn, stats, &rec, flags), j;
		b = now_us() - a;
		if (r < 0)
			die("virConnectGetAllDomainStats: %s", virGetLastErrorMessage());
		if (b < mn) mn = b;
		if (b > mx) mx = b;
		n = r;
		params = 0;
		for (j = 0; j < r; j++)
			params += rec[j]->nparams;
		virDomainStatsRecordListFree(rec);
	}
	t1 = now_us();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s1);
	c1 = lpid ? proc_cpu_ns(lpid) : 0;
	printf("bench groups=%s%s domains=%d params=%d calls=%d: wall avg %.2f ms (min %.2f, max %.2f); "
	       "client CPU %.2f ms/call; libvirtd CPU %.2f ms/call (USER_HZ resolution over the run)\n",
	       groups_s, nowait ? " nowait" : "", n, params, calls, (t1 - t0) / calls / 1000, mn / 1000, mx / 1000,
	       ((s1.tv_sec - s0.tv_sec) * 1e9 + (s1.tv_nsec - s0.tv_nsec)) / 1e6 / calls,
	       (double)(c1 - c0) / 1e6 / calls);
}

int main(int argc, char **argv)
{
	const char *uri = "qemu:///system", *freeze = "none";
	int rounds = 3, interval = 300, nowait = 0, opt, i, r;
	const struct group *g = NULL;
	virConnectPtr conn;

	setvbuf(stdout, NULL, _IOLBF, 0);
	clk_tck = sysconf(_SC_CLK_TCK);
	page_kib = sysconf(_SC_PAGESIZE) / 1024;
	while ((opt = getopt(argc, argv, "c:n:i:f:w")) != -1) {
		switch (opt) {
		case 'c': uri = optarg; break;
		case 'n': rounds = atoi(optarg); break;
		case 'i': interval = atoi(optarg); break;
		case 'f': freeze = optarg; break;
		case 'w': nowait = 1; break;
		default: die("usage: vmlab-probe [-c URI] [-n R] [-i MS] [-f none|stop|suspend] GROUP DOMAIN...");
		}
	}
	if (optind + 2 > argc)
		die("usage: vmlab-probe [options] cpu|vcpu|net|block|mem DOMAIN... | bench GROUPS CALLS");
	if (!(conn = virConnectOpen(uri)))
		die("cannot connect to %s", uri);
	if (!strcmp(argv[optind], "bench")) {
		bench(conn, argv[optind + 1], optind + 2 < argc ? atoi(argv[optind + 2]) : 10, nowait);
		virConnectClose(conn);
		return 0;
	}
	for (i = 0; i < (int)(sizeof(groups) / sizeof(groups[0])); i++)
		if (!strcmp(groups[i].name, argv[optind]))
			g = &groups[i];
	if (!g)
		die("unknown group %s", argv[optind]);
	if (!strcmp(freeze, "stop") && g->needs_qemu)
		die("-f stop with group %s would block in libvirt (it asks QEMU); use -f suspend", g->name);
	printf("USER_HZ=%ld pagesize=%ld KiB\n", clk_tck, page_kib);
	for (i = optind + 1; i < argc; i++) {
		struct dom d;
		memset(&d, 0, sizeof(d));
		d.name = argv[i];
		setup_dom(conn, &d);
		printf("%s: pid %d, cgroup2 %s, cgroup1 cpuacct %s, cgroup1 memory %s, tap %s, vcpu tids",
		       d.name, d.pid, d.cg2, d.cg1_cpuacct, d.cg1_memory, d.tap);
		for (r = 0; r < d.nvcpu; r++)
			printf(" %d", d.vcpu_tid[r]);
		printf("\n");
		for (r = 1; r <= rounds; r++) {
			round_one(&d, g, freeze, r);
			if (r < rounds)
				usleep(interval * 1000);
		}
		virDomainFree(d.d);
	}
	virConnectClose(conn);
	return 0;
}
