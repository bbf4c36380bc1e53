/* SPDX-License-Identifier: MIT */
/* test_vm_files.c - the per-VM fast path without libvirt: the parsers of
 * parse_vm.c, the cgroup lookup of cgroup.c and the reader of
 * vm_kernel.c against fixture trees.
 *
 * Values are the ones other projects computed (EXPECTED.md, quoted
 * below), or libvirt's own reading of the same VM at the same moment:
 * tests/fixtures/vm/v2-vms-002 was captured by capture.sh from a running
 * guest (suspended around the copy) together with `virsh domstats`
 * (domstats.txt), and the test reads its expected values from that file:
 * cpu.time/user/system, vcpu.0.delay, net.0.* (swapped), balloon.rss.
 * v1-fakevm is a real process in real v1 cpuacct and memory cgroups of
 * this host, with two threads named like KVM vCPU threads. */
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "cgroup.h"
#include "netdev_nl.h"
#include "parse.h"
#include "procfile.h"
#include "rates.h"
#include "schema.h"
#include "vm_kernel.h"

#define V2 "vm/v2-vms-002"
#define V2_PID 17562
#define V2_VCPU 17586
#define V1 "vm/v1-fakevm"
#define V1_PID 15614
#define CAPPED "vm/v1-capped/t0"
#define CAPPED1 "vm/v1-capped/t1"
#define CAPPED_PID "4826"
#define V2PCP "vm/v2-pcp-system-slice"

/* ---- /proc/<pid>/stat ----------------------------------------------------- */

static void taskstat(const char *name, struct vms_taskstat *ts)
{
	size_t len;
	char *b = fixture_readf(&len, "vm/taskstat/%s", name);
	assert_int_equal(vms_parse_taskstat(b, len, ts), 0);
	/* comm points into the buffer: copy before freeing */
	static char comm[64];
	assert_true(ts->comm_len < sizeof(comm));
	memcpy(comm, ts->comm, ts->comm_len);
	comm[ts->comm_len] = '\0';
	ts->comm = comm;
	free(b);
}

static void test_taskstat(void **state)
{
	(void)state;
	struct vms_taskstat ts;
	/* procfs proc_stat_test.go (EXPECTED.md) */
	taskstat("procfs-26231-vim", &ts);
	assert_string_equal(ts.comm, "vim");
	assert_int_equal(ts.state, 'R');
	assert_int_equal(ts.nfields, 52);
	assert_int_equal(ts.f[1], 26231);
	assert_int_equal(ts.f[14], 1677);     /* utime */
	assert_int_equal(ts.f[15], 44);       /* stime */
	assert_int_equal(ts.f[22], 82375);    /* starttime */
	assert_int_equal(ts.f[23], 56274944); /* vsize */
	assert_int_equal(ts.f[24], 1981);     /* rss */
	assert_true(ts.f[25] == 18446744073709551615ull); /* rsslim */
	assert_int_equal(ts.f[26], 4194304);
	assert_int_equal(ts.f[27], 6294284);
	assert_int_equal(ts.f[28], 140736914091744ull);
	assert_int_equal(ts.f[39], 0); /* processor */
	assert_int_equal(ts.f[40], 0); /* rt_priority */
	assert_int_equal(ts.f[41], 0); /* policy */
	assert_int_equal(ts.f[42], 31); /* delayacct_blkio_ticks */

	/* comm with blanks and parentheses: up to the last ')' of line 1;
	 * the second line of the file is ignored */
	taskstat("procfs-584-parens-in-comm", &ts);
	assert_string_equal(ts.comm, "(a b ) ( c d) ");
	assert_int_equal(ts.f[1], 1020);
	assert_int_equal(ts.state, 'R');
	assert_int_equal(ts.f[24], 155);
	taskstat("gopsutil-68927-parens-in-comm", &ts);
	assert_string_equal(ts.comm, "test(cmd).sh");
	assert_int_equal(ts.f[24], 868);
	taskstat("sysstat-firefox-task-8785-js-helper", &ts);
	assert_string_equal(ts.comm, "JS Helper");
	assert_int_equal(ts.f[24], 83951);
	/* 2.6-era 44 fields, i386 rsslim, no trailing newline, exit_signal -1 */
	taskstat("goprocinfo-3323-i386-proftpd", &ts);
	assert_int_equal(ts.nfields, 44);
	assert_int_equal(ts.f[25], 4294967295u);
	assert_int_equal(ts.f[24], 522);
	taskstat("goprocinfo-884-rsyslog-colon-space", &ts);
	assert_string_equal(ts.comm, "rs:main Q:Reg");
	assert_int_equal(ts.nfields, 44);
	assert_true(ts.f[38] == (uint64_t)-1); /* exit_signal */
	taskstat("procfs-27079-task-27080", &ts);
	assert_int_equal(ts.f[14], 34136);
	assert_true(ts.f[38] == (uint64_t)-1);

	/* bad input is an error, never a zero */
	static const char *const bad[] = {
		"",
		"123",
		"123 (x",
		"123 x) S 1 2 3",
		"123 (x) S 1 2 3",                    /* too few fields for rss */
		"abc (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21",
		"1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 2x 21",
		"1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 -21", /* rss < 0 */
		"1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 99999999999999999999999",
		"1 (x) S 1 2 - 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21",
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++)
		if (vms_parse_taskstat(bad[i], strlen(bad[i]), &ts) >= 0)
			fail_msg("accepted: %s", bad[i]);
	const char *ok = "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21";
	assert_int_equal(vms_parse_taskstat(ok, strlen(ok), &ts), 0);
	assert_int_equal(ts.f[24], 21);
}

/* ---- schedstat -------------------------------------------------------------- */

static int schedstat(const char *name, struct vms_schedstat *s)
{
	size_t len;
	char *b = fixture_readf(&len, "vm/schedstat/%s", name);
	int r = vms_parse_schedstat(b, len, s);
	free(b);
	return r;
}

static void test_schedstat(void **state)
{
	(void)state;
	struct vms_schedstat s;
	/* procfs TestProcSchedstat (EXPECTED.md) */
	assert_int_equal(schedstat("procfs-pid26231", &s), 0);
	assert_int_equal(s.run_ns, 411605849);
	assert_int_equal(s.wait_ns, 93680043);
	assert_int_equal(s.slices, 79);
	/* goprocinfo process_sched_stat_test.go: no trailing newline */
	assert_int_equal(schedstat("goprocinfo-3323-nonl", &s), 0);
	assert_int_equal(s.run_ns, 10148346876ull);
	assert_int_equal(s.wait_ns, 2977307715ull);
	assert_int_equal(s.slices, 39798);
	assert_int_equal(schedstat("sysstat-firefox-task-8785", &s), 0);
	assert_int_equal(s.run_ns, 108808196);
	/* procfs TestProcSchedstatErrors: parsing MUST FAIL */
	assert_int_equal(schedstat("procfs-pid26233-malformed", &s), -EINVAL);
	/* procfs TestProcSchedstatMultipleLines */
	assert_int_equal(vms_parse_schedstat("123 456 789\n10 11\n", 18, &s), 0);
	assert_int_equal(s.run_ns, 123);
	assert_int_equal(s.wait_ns, 456);
	assert_int_equal(s.slices, 789);
	static const char *const bad[] = {"", "\n", "1 2", "1 2 3 4", "1 2 x", "1 -2 3",
					  "1 2 99999999999999999999999"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++)
		if (vms_parse_schedstat(bad[i], strlen(bad[i]), &s) >= 0)
			fail_msg("accepted: '%s'", bad[i]);
}

/* ---- keyed and one-number files ------------------------------------------------ */

static void test_keyed(void **state)
{
	(void)state;
	static const char *const io[] = {"read_bytes", "write_bytes", "rchar"};
	uint64_t v[3];
	size_t len;
	char *b = fixture_read(V2 "/proc/17562/io", &len);
	assert_non_null(b);
	assert_int_equal(vms_parse_keyed(b, len, io, 3, v), 0);
	assert_int_equal(v[0], 322141184);
	assert_int_equal(v[1], 322589184);
	assert_int_equal(v[2], 337692971);
	free(b);

	static const char *const cpu[] = {"usage_usec", "user_usec", "system_usec", "absent"};
	uint64_t c[4];
	b = fixture_read(V2 "/cgroup/sys/fs/cgroup/unified/machine/qemu-11-vms-002.libvirt-qemu/cpu.stat", &len);
	assert_int_equal(vms_parse_keyed(b, len, cpu, 4, c), 0);
	assert_int_equal(c[0], 30417216);
	assert_int_equal(c[1], 27713355);
	assert_int_equal(c[2], 2703861);
	assert_true(c[3] == VMS_NONE); /* absent: missing, not 0 */
	free(b);

	static const char *const bad[] = {"usage_usec\n", "usage_usec x\n", "usage_usec 1 2\n",
					  "usage_usec 1\nusage_usec 2\n", "usage_usec -1\n",
					  "usage_usec 18446744073709551615\n"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++)
		if (vms_parse_keyed(bad[i], strlen(bad[i]), cpu, 4, c) >= 0)
			fail_msg("accepted: %s", bad[i]);

	uint64_t u;
	b = fixture_read(V1 "/cgroup/sys/fs/cgroup/cpuacct/machine/qemu-7-v1guest.libvirt-qemu/cpuacct.usage", &len);
	assert_int_equal(vms_parse_u64_file(b, len, &u), 0);
	assert_int_equal(u, 3784482786ull);
	free(b);
	assert_int_equal(vms_parse_u64_file("12\n\n", 4, &u), 0);
	static const char *const badu[] = {"", "x\n", "1 2\n", "1\n2\n", "-1\n", "18446744073709551615\n"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(badu); i++)
		if (vms_parse_u64_file(badu[i], strlen(badu[i]), &u) >= 0)
			fail_msg("accepted: %s", badu[i]);
}

static void test_iostat(void **state)
{
	(void)state;
	uint64_t r, w;
	size_t len;
	/* the example of Documentation/admin-guide/cgroup-v2.rst: sums */
	char *b = fixture_read("vm/iostat/kernel-doc-example", &len);
	assert_int_equal(vms_parse_iostat(b, len, &r, &w), 0);
	assert_int_equal(r, 1459200 + 90430464);
	assert_int_equal(w, 314773504 + 299008000);
	free(b);
	/* no device: missing, not 0 */
	assert_int_equal(vms_parse_iostat("", 0, &r, &w), 0);
	assert_true(r == VMS_NONE && w == VMS_NONE);
	static const char *const bad[] = {"8 rbytes=1\n", "8:0 rbytes\n", "8:0 rbytes=\n", "8:0 rbytes=x\n",
					  "8:0 =5\n"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++)
		if (vms_parse_iostat(bad[i], strlen(bad[i]), &r, &w) >= 0)
			fail_msg("accepted: %s", bad[i]);
}

/* ---- /proc/<pid>/cgroup, mountinfo, thread names -------------------------------- */

static void test_pidcg_mountinfo(void **state)
{
	(void)state;
	struct vms_pidcg pc;
	size_t len;
	char *b = fixture_read(V2 "/proc/17562/cgroup", &len);
	assert_int_equal(vms_parse_pidcg(b, len, &pc), 0);
	assert_int_equal(pc.v2_len, strlen("/machine/qemu-11-vms-002.libvirt-qemu/emulator"));
	assert_memory_equal(pc.v2, "/machine/qemu-11-vms-002.libvirt-qemu/emulator", pc.v2_len);
	assert_memory_equal(pc.cpuacct, "/", pc.cpuacct_len); /* not placed in v1 cpuacct here */
	assert_int_equal(pc.cpuacct_len, 1);
	assert_memory_equal(pc.memory, "/machine/qemu-11-vms-002.libvirt-qemu", pc.memory_len);
	free(b);
	/* a path may hold ':'; co-mounted controllers */
	const char *t = "4:cpu,cpuacct:/a:b\n3:memory:/m\n";
	assert_int_equal(vms_parse_pidcg(t, strlen(t), &pc), 0);
	assert_int_equal(pc.cpuacct_len, 4);
	assert_memory_equal(pc.cpuacct, "/a:b", 4);
	assert_int_equal(pc.v2_len, 0);
	static const char *const bad[] = {"x::/a\n", "0:/a\n", "0::a\n", "0::/a\n0::/b\n", "0::\n"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++)
		if (vms_parse_pidcg(bad[i], strlen(bad[i]), &pc) >= 0)
			fail_msg("accepted: %s", bad[i]);

	b = fixture_read(V2 "/proc/self/mountinfo", &len);
	struct vms_cur c;
	struct vms_mount m;
	int r, n = 0, cg2 = 0;
	vms_cur_init(&c, b, len);
	while ((r = vms_mountinfo_next(&c, &m)) != 0) {
		assert_int_equal(r, 1);
		n++;
		if (m.fstype_len == 7 && memcmp(m.fstype, "cgroup2", 7) == 0) {
			cg2++;
			assert_memory_equal(m.point, "/sys/fs/cgroup/unified", m.point_len);
		}
	}
	assert_int_equal(cg2, 1);
	assert_true(n > 10);
	free(b);
	const char *esc = "36 35 98:0 /x /mnt/my\\040disk rw master:1 shared:2 - ext4 /dev/sda1 rw\n";
	vms_cur_init(&c, esc, strlen(esc));
	assert_int_equal(vms_mountinfo_next(&c, &m), 1);
	char path[64];
	assert_int_equal(vms_unescape_octal(m.point, m.point_len, path, sizeof(path)), 12);
	assert_string_equal(path, "/mnt/my disk");
	assert_memory_equal(m.fstype, "ext4", 4);
	assert_true(vms_unescape_octal("a\\0", 3, path, sizeof(path)) < 0);
	assert_true(vms_unescape_octal("a\\000b", 6, path, sizeof(path)) < 0);
	assert_true(vms_unescape_octal("abcdef", 6, path, 4) == -ENAMETOOLONG);
	const char *nodash = "36 35 98:0 / /mnt rw master:1 ext4 /dev/sda1 rw\n";
	vms_cur_init(&c, nodash, strlen(nodash));
	assert_int_equal(vms_mountinfo_next(&c, &m), -EINVAL);

	assert_int_equal(vms_vcpu_thread_index("CPU 0/TCG\n", 10), 0);
	assert_int_equal(vms_vcpu_thread_index("CPU 12/KVM", 10), 12);
	assert_int_equal(vms_vcpu_thread_index("CPU 1/HVF", 9), 1);
	assert_int_equal(vms_vcpu_thread_index("CPU /KVM", 8), -1);
	assert_int_equal(vms_vcpu_thread_index("CPU 1", 5), -1);
	assert_int_equal(vms_vcpu_thread_index("CPU 1/", 6), -1);
	assert_int_equal(vms_vcpu_thread_index("worker", 6), -1);
	assert_int_equal(vms_vcpu_thread_index("CPU 1/K M", 9), -1);
}

/* ---- cgroup lookup ---------------------------------------------------------------- */

struct tree {
	int dirfd;
	struct vms_cgmounts m;
	char cgroot[1100];
};

static void tree_open(struct tree *t, const char *fix)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s", fixture_path(fix));
	snprintf(t->cgroot, sizeof(t->cgroot), "%s/cgroup/sys/fs/cgroup", p);
	strcat(p, "/proc");
	t->dirfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t->dirfd >= 0);
	assert_int_equal(vms_cgmounts_load(&t->m, t->dirfd, t->cgroot), 0);
}

static void tree_close(struct tree *t)
{
	vms_cgmounts_free(&t->m);
	close(t->dirfd);
}

static bool ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void test_cgroup_lookup(void **state)
{
	(void)state;
	struct tree t;
	struct vms_cgfiles f;
	size_t len;
	char *b;

	/* this host: a cgroup2 VM group for cpu, v1 memory */
	tree_open(&t, V2);
	assert_non_null(t.m.v2.point);
	assert_true(ends(t.m.v2.point, "/cgroup/sys/fs/cgroup/unified"));
	assert_true(ends(t.m.cpuacct.point, "/cgroup/sys/fs/cgroup/cpuacct"));
	assert_true(ends(t.m.memory.point, "/cgroup/sys/fs/cgroup/memory"));
	b = fixture_read(V2 "/proc/17562/cgroup", &len);
	assert_int_equal(vms_cgfiles_find(&f, &t.m, b, len), 0);
	free(b);
	assert_non_null(f.cpu_stat);
	assert_true(ends(f.cpu_stat, "/unified/machine/qemu-11-vms-002.libvirt-qemu/cpu.stat"));
	assert_null(f.cpuacct_usage); /* the VM is not in a v1 cpuacct group here */
	assert_non_null(f.mem);
	assert_true(ends(f.mem, "/memory/machine/qemu-11-vms-002.libvirt-qemu/memory.usage_in_bytes"));
	assert_null(f.io_stat); /* no io controller in cgroup2 here */
	vms_cgfiles_free(&f);
	tree_close(&t);

	/* v1 only for this process: cpuacct and memory */
	tree_open(&t, V1);
	b = fixture_read(V1 "/proc/15614/cgroup", &len);
	assert_int_equal(vms_cgfiles_find(&f, &t.m, b, len), 0);
	free(b);
	assert_null(f.cpu_stat); /* 0::/ is the root: not the VM's */
	assert_true(ends(f.cpuacct_usage, "/cpuacct/machine/qemu-7-v1guest.libvirt-qemu/cpuacct.usage"));
	assert_true(ends(f.cpuacct_stat, "/cpuacct.stat"));
	assert_true(ends(f.mem, "/memory/machine/qemu-7-v1guest.libvirt-qemu/memory.usage_in_bytes"));
	vms_cgfiles_free(&f);
	tree_close(&t);

	/* no mount table: the root is probed (a cgroup2 at root/unified) */
	char *dir = tmpdir_make(), p[600];
	snprintf(p, sizeof(p), "%s/cg/unified/cgroup.controllers", dir);
	write_file(p, "hugetlb\n", 8);
	snprintf(p, sizeof(p), "%s/proc/1/stat", dir);
	write_file(p, "", 0);
	snprintf(p, sizeof(p), "%s/proc", dir);
	int fd = open(p, O_RDONLY | O_DIRECTORY);
	struct vms_cgmounts m;
	snprintf(p, sizeof(p), "%s/cg", dir);
	assert_int_equal(vms_cgmounts_load(&m, fd, p), 0);
	assert_non_null(m.v2.point);
	assert_true(ends(m.v2.point, "/cg/unified"));
	assert_null(m.cpuacct.point);
	vms_cgmounts_free(&m);
	close(fd);
	tmpdir_free(dir);
}

/* ---- the reader -------------------------------------------------------------------- */

/* A value of domstats.txt ("  key=value"). */
static uint64_t domstat(const char *key)
{
	size_t len;
	char *b = fixture_read(V2 "/domstats.txt", &len), want[128];
	snprintf(want, sizeof(want), "  %s=", key);
	char *p = strstr(b, want);
	assert_non_null(p);
	uint64_t v = strtoull(p + strlen(want), NULL, 10);
	free(b);
	return v;
}

struct rdr {
	struct tree t;
	struct vms_vmk k;
	struct vms_vmlay l;
	struct vms_nettab nt;
	char *netdev;
	uint64_t slots[256];
	char scratch[16384];
};

static void rdr_open(struct rdr *r, const char *fix, const struct vms_vm *vm)
{
	tree_open(&r->t, fix);
	assert_int_equal(vms_vmk_open(&r->k, vm, r->t.dirfd, &r->t.m, -1), 0);
	vms_vmlay_init(&r->l, vm->nvcpu, vm->ntap, vm->ndisk, r->k.fd_iostat >= 0, vms_vmcg_ncols(&r->k.cg), false);
	char rel[256];
	size_t len;
	snprintf(rel, sizeof(rel), "%s/proc/net/dev", fix);
	r->netdev = fixture_read(rel, &len);
	r->nt.cap = 64;
	r->nt.ent = calloc(r->nt.cap, sizeof(*r->nt.ent));
	vms_nettab_index(&r->nt, r->netdev, len);
	assert_true(r->nt.ok);
}

static unsigned rdr_sample(struct rdr *r, bool detail, bool *gone, uint32_t *perr)
{
	for (size_t i = 0; i < VMS_ARRAY_SIZE(r->slots); i++)
		r->slots[i] = VMS_NONE;
	*gone = false;
	*perr = 0;
	return vms_vmk_sample(&r->k, &r->l, r->slots, &r->nt, NULL, r->scratch, sizeof(r->scratch), detail, gone,
			      perr);
}

static void rdr_close(struct rdr *r)
{
	vms_vmk_close(&r->k);
	tree_close(&r->t);
	free(r->nt.ent);
	free(r->netdev);
}

static void test_reader_v2_equals_libvirt(void **state)
{
	(void)state;
	struct rdr *r = calloc(1, sizeof(*r));
	pid_t tid[1] = {V2_VCPU};
	char *tap[1] = {"vmst2"}, *disk[1] = {"vda"};
	struct vms_vm vm = {.uuid = "4d0c6bd9-5ae6-43b2-8d56-3c9c6e0e7e3a", .name = "vms-002", .pid = V2_PID,
			    .nvcpu = 1, .vcpu_tid = tid, .ntap = 1, .tap = tap, .ndisk = 1, .disk = disk};
	rdr_open(r, V2, &vm);
	assert_int_equal(r->k.have, VMS_VG_CPU | VMS_VG_VCPU | VMS_VG_NET | VMS_VG_IO | VMS_VG_MEM);
	bool gone;
	uint32_t perr;
	unsigned ok = rdr_sample(r, true, &gone, &perr);
	assert_int_equal(ok, VMS_VG_CPU | VMS_VG_VCPU | VMS_VG_NET | VMS_VG_IO | VMS_VG_MEM);
	assert_false(gone);
	assert_int_equal(perr, 0);
	const uint64_t *s = r->slots;
	/* what libvirt said at the same moment */
	assert_int_equal(s[r->l.cpu], domstat("cpu.time"));
	assert_int_equal(s[r->l.cpu + 1], domstat("cpu.user"));
	assert_int_equal(s[r->l.cpu + 2], domstat("cpu.system"));
	assert_int_equal(s[r->l.vcpu + 1], domstat("vcpu.0.delay"));
	/* vcpu.0.time is libvirt's 10 ms view; ours is the thread's run time */
	assert_int_equal(s[r->l.vcpu], 27099086999ull);
	assert_int_equal(s[r->l.vcpu + 2], 134621);
	static const char *const net[] = {"net.0.rx.bytes", "net.0.rx.pkts", "net.0.rx.errs", "net.0.rx.drop",
					  "net.0.tx.bytes", "net.0.tx.pkts", "net.0.tx.errs", "net.0.tx.drop"};
	for (int i = 0; i < 8; i++)
		assert_int_equal(s[r->l.net + i], domstat(net[i]));
	assert_int_equal(s[r->l.mem], domstat("balloon.rss") * 1024);
	assert_int_equal(s[r->l.mem + 1], 189550592); /* memory.usage_in_bytes */
	assert_int_equal(s[r->l.io], 322141184);
	assert_int_equal(s[r->l.io + 1], 322589184);
	/* the kernel has no balloon or block values: left alone */
	for (int i = 0; i < VMS_VM_NBALLOON; i++)
		assert_true(s[r->l.balloon + i] == VMS_NONE);
	assert_int_equal(r->l.iocg, -1);
	/* the reader does not write past the VM's columns */
	for (size_t i = r->l.ncol; i < VMS_ARRAY_SIZE(r->slots); i++)
		assert_true(r->slots[i] == VMS_NONE);
	rdr_close(r);
	free(r);
}

/* Field n (as proc(5) numbers them) of a stat file, read with strtok
 * after the last ')'. */
static uint64_t task_field(const char *rel, int n)
{
	size_t len;
	char *b = fixture_read(rel, &len), *save = NULL;
	char *t = strtok_r(strrchr(b, ')') + 1, " \n", &save);
	for (int f = 3; f < n; f++)
		t = strtok_r(NULL, " \n", &save);
	assert_non_null(t);
	uint64_t v = strtoull(t, NULL, 10);
	free(b);
	return v;
}

/* mem.rss on the detail cadence (sources.libvirt.detail_interval):
 * /proc/<pid>/stat is read in the detail ticks only; in the others mem.rss
 * is missing, its file not read, mem.cgroup and every other group read as
 * always, and the memory group still counts as served (vm.NAME.path). */
static void test_reader_rss_detail(void **state)
{
	(void)state;
	struct rdr *r = calloc(1, sizeof(*r));
	pid_t tid[1] = {V2_VCPU};
	char *tap[1] = {"vmst2"};
	struct vms_vm vm = {.uuid = "4d0c6bd9-5ae6-43b2-8d56-3c9c6e0e7e3a", .name = "vms-002", .pid = V2_PID,
			    .nvcpu = 1, .vcpu_tid = tid, .ntap = 1, .tap = tap};
	rdr_open(r, V2, &vm);
	const unsigned all = VMS_VG_CPU | VMS_VG_VCPU | VMS_VG_NET | VMS_VG_IO | VMS_VG_MEM;
	bool gone;
	uint32_t perr;
	for (int round = 0; round < 2; round++) {
		/* a detail tick: cpu.stat, schedstat, io, stat, memory.usage_in_bytes,
		 * and the vCPU's task stat (its status is not in the capture) */
		uint64_t before = r->k.reads;
		assert_int_equal(rdr_sample(r, true, &gone, &perr), all);
		assert_int_equal(r->k.reads - before, 6);
		assert_int_equal(r->slots[r->l.place], task_field(V2 "/proc/17562/task/17586/stat", 39));
		assert_true(r->slots[r->l.place + 1] == VMS_NONE);
		assert_int_equal(r->slots[r->l.mem], domstat("balloon.rss") * 1024);
		assert_int_equal(r->slots[r->l.mem + 1], 189550592);
		uint64_t cpu = r->slots[r->l.cpu], io = r->slots[r->l.io];
		/* two ticks between: all but /proc/<pid>/stat */
		for (int k = 0; k < 2; k++) {
			before = r->k.reads;
			assert_int_equal(rdr_sample(r, false, &gone, &perr), all);
			assert_int_equal(r->k.reads - before, 4);
			assert_false(gone);
			assert_int_equal(perr, 0);
			assert_true(r->slots[r->l.mem] == VMS_NONE);
			assert_true(r->slots[r->l.place] == VMS_NONE); /* placement: detail ticks */
			assert_int_equal(r->slots[r->l.mem + 1], 189550592);
			assert_int_equal(r->slots[r->l.cpu], cpu);
			assert_int_equal(r->slots[r->l.io], io);
			assert_int_equal(r->slots[r->l.vcpu + 1], domstat("vcpu.0.delay"));
		}
	}
	rdr_close(r);
	free(r);
}

static void test_reader_v1_and_missing(void **state)
{
	(void)state;
	struct rdr *r = calloc(1, sizeof(*r));
	pid_t tid[3] = {15656, 15657, 0}; /* the third vCPU's thread is unknown */
	char *tap[1] = {"nosuchtap0"};
	struct vms_vm vm = {.uuid = "00000000-0000-0000-0000-000000000001", .name = "v1guest", .pid = V1_PID,
			    .nvcpu = 3, .vcpu_tid = tid, .ntap = 1, .tap = tap};
	rdr_open(r, V1, &vm);
	bool gone;
	uint32_t perr;
	unsigned ok = rdr_sample(r, true, &gone, &perr);
	/* cpu from v1 cpuacct; vCPUs: one unknown thread; the tap is not in
	 * /proc/net/dev */
	assert_int_equal(ok & VMS_VG_CPU, VMS_VG_CPU);
	assert_int_equal(ok & (VMS_VG_VCPU | VMS_VG_NET), 0);
	assert_int_equal(r->k.have & VMS_VG_VCPU, 0);
	const uint64_t *s = r->slots;
	assert_int_equal(s[r->l.cpu], 3784482786ull);     /* cpuacct.usage */
	assert_int_equal(s[r->l.cpu + 1], 357 * (1000000000ull / sysconf(_SC_CLK_TCK)));
	assert_int_equal(s[r->l.cpu + 2], 20 * (1000000000ull / sysconf(_SC_CLK_TCK)));
	/* vCPU threads named "CPU N/KVM" are only read when the agent names
	 * them: the have-bit is off, so nothing is read */
	for (int i = 0; i < 9; i++)
		assert_true(s[r->l.vcpu + i] == VMS_NONE);
	for (int i = 0; i < 8; i++)
		assert_true(s[r->l.net + i] == VMS_NONE);
	assert_int_equal(s[r->l.mem], 3475ull * (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(s[r->l.mem + 1], 9875456);
	assert_int_equal(s[r->l.io], 950272);
	assert_false(gone);
	rdr_close(r);

	/* both vCPU threads known: read */
	memset(r, 0, sizeof(*r));
	tid[2] = 0;
	vm.nvcpu = 2;
	rdr_open(r, V1, &vm);
	ok = rdr_sample(r, true, &gone, &perr);
	assert_int_equal(ok & VMS_VG_VCPU, VMS_VG_VCPU);
	assert_int_equal(r->slots[r->l.vcpu], 1860380469);
	assert_int_equal(r->slots[r->l.vcpu + 1], 169349792);
	assert_int_equal(r->slots[r->l.vcpu + 2], 10460);
	assert_int_equal(r->slots[r->l.vcpu + 4], 186352168);
	rdr_close(r);
	free(r);
}

/* Which fields are detail (read on the slower cadence): the memory
 * breakdown, the memory events, swap and the pressure totals; not the
 * limits and not the throttling. */
static void test_cg_detail_fields(void **state)
{
	(void)state;
	static const unsigned detail[] = {
		VMS_CGF_EV_HIGH, VMS_CGF_EV_MAX, VMS_CGF_EV_OOM, VMS_CGF_EV_OOM_KILL, VMS_CGF_ANON,
		VMS_CGF_FILE, VMS_CGF_SWAP, VMS_CGF_PGMAJFAULT, VMS_CGF_PSI_CPU_SOME, VMS_CGF_PSI_CPU_FULL,
		VMS_CGF_PSI_MEM_SOME, VMS_CGF_PSI_MEM_FULL, VMS_CGF_PSI_IO_SOME, VMS_CGF_PSI_IO_FULL,
	};
	uint32_t want = 0;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(detail); i++)
		want |= 1u << detail[i];
	for (unsigned f = 0; f < VMS_CGF_N; f++)
		assert_int_equal(vms_vmcg_detail(f), (want >> f) & 1);
}

/* A real process of this host as a one-vCPU VM (its main thread the
 * vCPU), read through the kernel reader from /proc. */
struct child_vm {
	struct vms_cgmounts m;
	int dirfd;
	pid_t tid[1];
	struct vms_vm vm;
	struct vms_vmk k;
	struct vms_vmlay l;
	uint64_t slots[64];
	char scratch[8192];
};

static void child_open(struct child_vm *c, pid_t pid)
{
	c->dirfd = open("/proc", O_RDONLY | O_DIRECTORY);
	assert_true(c->dirfd >= 0);
	assert_int_equal(vms_cgmounts_load(&c->m, c->dirfd, NULL), 0);
	c->tid[0] = pid;
	c->vm = (struct vms_vm){.uuid = "00000000-0000-0000-0000-000000000002", .name = "child", .pid = pid,
				.nvcpu = 1, .vcpu_tid = c->tid};
	assert_int_equal(vms_vmk_open(&c->k, &c->vm, c->dirfd, &c->m, -1), 0);
	vms_vmlay_init(&c->l, 1, 0, 0, false, 0, false);
}

/* One sample into fresh slots (all VMS_NONE first). */
static unsigned child_sample(struct child_vm *c, bool detail, bool *gone, uint32_t *perr)
{
	for (size_t i = 0; i < VMS_ARRAY_SIZE(c->slots); i++)
		c->slots[i] = VMS_NONE;
	*gone = false;
	*perr = 0;
	return vms_vmk_sample(&c->k, &c->l, c->slots, NULL, NULL, c->scratch, sizeof(c->scratch), detail, gone,
			      perr);
}

static void child_close(struct child_vm *c)
{
	vms_vmk_close(&c->k);
	vms_cgmounts_free(&c->m);
	close(c->dirfd);
}

/* A real process that exits: its kept-open files read ESRCH and the
 * reader says the VM is gone, with no values and no parse error. */
static void test_reader_gone(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	struct child_vm *c = calloc(1, sizeof(*c));
	child_open(c, child);
	bool gone;
	uint32_t perr;
	unsigned ok = child_sample(c, true, &gone, &perr);
	assert_true(ok & VMS_VG_MEM);
	assert_true(ok & VMS_VG_VCPU);
	assert_true(c->slots[c->l.mem] != VMS_NONE);
	assert_false(gone);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* in a detail tick and in one without (where mem.rss is not read: its
	 * group is not served once the other files say the process went) */
	for (int detail = 0; detail < 2; detail++) {
		ok = child_sample(c, detail, &gone, &perr);
		assert_true(gone);
		assert_int_equal(ok & (VMS_VG_MEM | VMS_VG_VCPU | VMS_VG_IO), 0);
		assert_true(c->slots[c->l.mem] == VMS_NONE);
		assert_true(c->slots[c->l.vcpu] == VMS_NONE);
		assert_true(c->slots[c->l.place] == VMS_NONE);
		assert_int_equal(perr, 0);
	}
	child_close(c);
	free(c);
}

/* Cpus_allowed_list as the kernel prints it (bitmap_print_to_pagebuf's
 * "%*pbl": ranges in increasing order), and what is refused. */
static void test_cpulist(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ret;
		uint32_t n, first;
	} cases[] = {
		{"0-3\n", 0, 4, 0},
		{"\t0-3,8,10-11\n", 0, 7, 0},
		{"5", 0, 1, 5},
		{"2,4-5,7\n", 0, 4, 2},
		{"0-65535\n", 0, 65536, 0},
		{"\n", 0, 0, 0},
		{"0-65536\n", -EINVAL, 0, 0},   /* past VMS_CPULIST_MAX */
		{"3-1\n", -EINVAL, 0, 0},
		{"1,1\n", -EINVAL, 0, 0},       /* not increasing */
		{"4,2\n", -EINVAL, 0, 0},
		{"0-3,\n", -EINVAL, 0, 0},
		{"0--3\n", -EINVAL, 0, 0},
		{"a\n", -EINVAL, 0, 0},
		{"0-3 \n", -EINVAL, 0, 0},
		{"ff\n", -EINVAL, 0, 0},        /* the mask, not the list */
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		uint32_t n = 99, first = 99;
		size_t len = strlen(cases[i].text);
		char *exact = malloc(len ? len : 1);
		memcpy(exact, cases[i].text, len);
		int r = vms_parse_cpulist(exact, len, &n, &first);
		free(exact);
		if (r != cases[i].ret)
			fail_msg("case %u: %d, want %d", i, r, cases[i].ret);
		if (r == 0 && (n != cases[i].n || first != cases[i].first))
			fail_msg("case %u: %u from %u, want %u from %u", i, n, first, cases[i].n, cases[i].first);
	}
	const char *st = "Name:\tCPU 0/KVM\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n";
	uint32_t n, first;
	assert_int_equal(vms_parse_status_cpus(st, strlen(st), &n, &first), 0);
	assert_int_equal(n, 2);
	assert_int_equal(first, 0);
	assert_int_equal(vms_parse_status_cpus(st, 20, &n, &first), -ENOENT);
}

/* The CPU list of a status file's Cpus_allowed_list, expanded by hand:
 * how many CPUs, the lowest. */
static void ref_allowed(pid_t pid, unsigned *n, unsigned *first)
{
	char p[64], line[512];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/status", (int)pid, (int)pid);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	*n = 0;
	*first = ~0u;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Cpus_allowed_list:", 18) != 0)
			continue;
		char *save = NULL;
		for (char *r = strtok_r(line + 18, ",\n\t ", &save); r; r = strtok_r(NULL, ",\n\t ", &save)) {
			unsigned a, b;
			int k = sscanf(r, "%u-%u", &a, &b);
			assert_true(k >= 1);
			if (k == 1)
				b = a;
			*n += b - a + 1;
			if (a < *first)
				*first = a;
		}
	}
	fclose(f);
}

/* vcpuN.pcpu, allowed, allowed_first of a real thread: a child pinned to
 * the highest CPU we may use, spinning, and one left as it is (its
 * affinity as its status file says, expanded by the test). */
static void test_reader_placement(void **state)
{
	(void)state;
	int cpu = test_last_cpu();
	for (int pin = 0; pin < 2; pin++) {
		pid_t child = test_spin_on(pin ? cpu : -1);
		usleep(100 * 1000);
		struct child_vm *c = calloc(1, sizeof(*c));
		child_open(c, child);
		bool gone;
		uint32_t perr;
		child_sample(c, true, &gone, &perr);
		assert_false(gone);
		assert_int_equal(perr, 0);
		unsigned n, first;
		ref_allowed(child, &n, &first);
		const uint64_t *pl = c->slots + c->l.place;
		if (pin) {
			assert_int_equal(n, 1);
			assert_int_equal(first, cpu);
			assert_int_equal(pl[0], cpu); /* a pinned thread runs nowhere else */
		} else {
			assert_true(pl[0] < 65536);
		}
		assert_int_equal(pl[1], n);
		assert_int_equal(pl[2], first);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child_close(c);
		free(c);
	}
}

/* A VM's taps from one rtnetlink stats dump (by ifindex) equal the
 * /proc/net/dev lines read just before and after (lo and a tap that does
 * not exist: the first bracketed, the second missing in both ways). */
static void test_taps_netlink(void **state)
{
	(void)state;
	struct vms_cgmounts m;
	int dirfd = open("/proc", O_RDONLY | O_DIRECTORY);
	assert_int_equal(vms_cgmounts_load(&m, dirfd, NULL), 0);
	char t0[] = "lo", t1[] = "vmsnotap0";
	char *taps[2] = {t0, t1};
	struct vms_vm vm = {.uuid = "00000000-0000-0000-0000-000000000003", .name = "self", .pid = getpid(),
			    .ntap = 2, .tap = taps};
	struct vms_vmk k;
	struct vms_vmlay l;
	assert_int_equal(vms_vmk_open(&k, &vm, dirfd, &m, -1), 0);
	assert_true(k.tap[0].ifindex > 0);
	assert_int_equal(k.tap[1].ifindex, 0);
	vms_vmlay_init(&l, 0, 2, 0, false, 0, false);
	struct vms_nl nl = VMS_NL_INIT;
	if (vms_nl_open(&nl) < 0)
		vms_skip("VMS_REQUIRE_ROOT", "no rtnetlink stats dump here");
	struct vms_nlstats st = {.cap = 4096};
	st.ent = calloc(st.cap, sizeof(*st.ent));
	assert_non_null(st.ent);
	struct vms_procfile nd = VMS_PROCFILE_INIT;
	assert_int_equal(vms_procfile_open(&nd, dirfd, "net/dev", 4096), 0);
	struct vms_nettab nt = {.cap = 4096};
	nt.ent = calloc(nt.cap, sizeof(*nt.ent));
	assert_non_null(nt.ent);
	static const struct vms_nl_ops ops = {.stats = vms_nlstats_add};
	uint64_t before[64], mid[64], after[64];
	char scratch[8192];
	uint64_t *out[3] = {before, mid, after};
	for (int round = 0; round < 3; round++) {
		bool gone = false;
		uint32_t perr = 0;
		for (size_t i = 0; i < 64; i++)
			out[round][i] = VMS_NONE;
		unsigned ok;
		if (round == 1) {
			st.n = 0;
			assert_int_equal(vms_nl_dump(&nl, RTM_GETSTATS, &ops, &st), 0);
			assert_false(st.full);
			st.ok = true;
			ok = vms_vmk_sample(&k, &l, out[round], NULL, &st, scratch, sizeof(scratch), true, &gone, &perr);
		} else {
			assert_int_equal(vms_procfile_read(&nd), 0);
			vms_nettab_index(&nt, nd.buf, nd.len);
			assert_true(nt.ok);
			ok = vms_vmk_sample(&k, &l, out[round], &nt, NULL, scratch, sizeof(scratch), true, &gone, &perr);
		}
		assert_int_equal(perr, 0);
		assert_false(ok & VMS_VG_NET); /* one tap has no counters */
	}
	for (int f = 0; f < VMS_VM_NET_FIELDS; f++) {
		int32_t c0 = l.net + f, c1 = l.net + VMS_VM_NET_FIELDS + f;
		assert_true(before[c0] != VMS_NONE && after[c0] != VMS_NONE);
		if (!(before[c0] <= mid[c0] && mid[c0] <= after[c0]))
			fail_msg("lo field %d: netlink %llu not between /proc/net/dev's %llu and %llu", f,
				 (unsigned long long)mid[c0], (unsigned long long)before[c0],
				 (unsigned long long)after[c0]);
		assert_true(mid[c1] == VMS_NONE && before[c1] == VMS_NONE);
	}
	free(st.ent);
	free(nt.ent);
	vms_procfile_close(&nd);
	vms_nl_close(&nl);
	vms_vmk_close(&k);
	vms_cgmounts_free(&m);
	close(dirfd);
}

/* Every metric/index of l has its own column and its group; state, path,
 * slow_t and the vCPUs' placement are the only columns without a metric. */
static void check_layout(const struct vms_vmlay *lp)
{
	const struct vms_vmlay l = *lp;
	bool used[256] = {false};
	unsigned n = 0;
	for (unsigned m = 0; m < 1024; m++)
		for (unsigned i = 0; i < 4; i++) {
			int32_t c = vms_vmlay_col(&l, m, i);
			if (c < 0)
				continue;
			const struct vms_vmetric_info *mi = vms_vmetric_find(m);
			assert_non_null(mi);
			assert_true((uint32_t)c < l.ncol);
			if (used[c]) {
				if (i > 0 && vms_vmlay_col(&l, m, 0) == c)
					continue; /* a metric without an index */
				fail_msg("metric %u index %u shares column %d", m, i, c);
			}
			used[c] = true;
			assert_int_equal(vms_vmlay_group(&l, (uint32_t)c), mi->group);
			n++;
		}
	assert_int_equal(n + 3 + VMS_VM_PLACE_FIELDS * l.nvcpu, l.ncol);
	for (unsigned i = 0; i < VMS_VM_PLACE_FIELDS * l.nvcpu; i++) {
		assert_false(used[l.place + (int32_t)i]);
		assert_int_equal(vms_vmlay_group(&l, (uint32_t)(l.place + (int32_t)i)), 0);
	}
}

static void test_layout(void **state)
{
	(void)state;
	struct vms_vmlay l;
	vms_vmlay_init(&l, 2, 1, 2, true, 0, true);
	check_layout(&l);
	/* no migration columns until a migration was seen, then after all the
	 * others (what the VM had keeps its columns) */
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_MIG_TIME_ELAPSED, 0), -1);
	struct vms_vmlay before = l;
	vms_vmlay_add_mig(&l);
	vms_vmlay_add_mig(&l); /* once */
	assert_int_equal(l.ncol, before.ncol + VMS_VM_NMIG);
	check_layout(&l);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_MIG_JOB, 0), (int32_t)before.ncol);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_MIG_DISK_BPS, 0), (int32_t)l.ncol - 1);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_BLOCK_RD_BYTES, 1), vms_vmlay_col(&before, VMS_VM_BLOCK_RD_BYTES, 1));
	assert_int_equal(l.slow_t, before.slow_t);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_MIG_JOB + VMS_VM_NMIG, 0), -1);
	/* dirty-rate columns (sources.libvirt.dirty_rate_every): declared
	 * before the migration ones, which then follow them */
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_DIRTY_MBPS, 0), -1);
	vms_vmlay_init(&l, 2, 1, 2, true, 0, true);
	vms_vmlay_add_dirty(&l);
	vms_vmlay_add_dirty(&l); /* once */
	vms_vmlay_add_mig(&l);
	assert_int_equal(l.ncol, before.ncol + VMS_VM_NDIRTY + VMS_VM_NMIG);
	check_layout(&l);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_DIRTY_STATUS, 0), (int32_t)before.ncol);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_DIRTY_MBPS, 0), (int32_t)before.ncol + VMS_VM_NDIRTY - 1);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_MIG_JOB, 0), (int32_t)before.ncol + VMS_VM_NDIRTY);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_DIRTY_STATUS + VMS_VM_NDIRTY, 0), -1);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_VCPU_TIME, 2), -1);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_BLOCK_RD_BYTES, 2), -1);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_NET_RX_BYTES, 1), -1);
	vms_vmlay_init(&l, 1, 0, 0, false, 0, false);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_IO_CG_READ, 0), -1);
	assert_int_equal(vms_vmlay_col(&l, VMS_VM_CHECK_CPU_TIME, 0), -1);
}

/* ---- the VM's cgroup: limits, throttling, events, pressure ----------------------- */

/* The value of `key` in a "key value" file, or the first number of a file
 * (key NULL; "max" is VMS_CG_UNLIMITED), or a pressure line's total
 * (key "some"/"full" with psi), read with sscanf. */
static uint64_t cgval(const char *rel, const char *key, bool psi)
{
	size_t len;
	char *b = fixture_read(rel, &len), *save = NULL;
	uint64_t v = VMS_NONE;
	for (char *ln = strtok_r(b, "\n", &save); ln && v == VMS_NONE; ln = strtok_r(NULL, "\n", &save)) {
		char k[64];
		unsigned long long x;
		if (!key) {
			v = strcmp(ln, "max") == 0 ? VMS_CG_UNLIMITED : strtoull(ln, NULL, 10);
		} else if (psi) {
			const char *t = strstr(ln, "total=");
			if (sscanf(ln, "%63s", k) == 1 && strcmp(k, key) == 0 && t && sscanf(t, "total=%llu", &x) == 1)
				v = x;
		} else if (sscanf(ln, "%63s %llu", k, &x) == 2 && strcmp(k, key) == 0) {
			v = x;
		}
	}
	free(b);
	return v;
}

/* The cg.* value of field f in s (the VM's cg columns), or fail. */
static uint64_t cgcol(const struct vms_vmcg *g, const uint64_t *s, unsigned f)
{
	if (!(g->have & (1u << f)))
		fail_msg("no cg.%s", vms_catalog[VMS_G_VMCG].fields[f].name);
	return s[__builtin_popcount(g->have & ((1u << f) - 1))];
}

/* A process capped at a quarter of a CPU in real cgroups of the vmlab
 * host (v1 cpu and memory controllers, cgroup2 without controllers:
 * tests/fixtures/vm/capture_cg.sh): its limits and throttling from v1,
 * its pressure from cgroup2, each equal to the file. */
static void test_cg_capped_v1(void **state)
{
	(void)state;
	struct tree t;
	struct vms_cgfiles f;
	size_t len;
	char rel[1200], cpu[256], mem[512], uni[256];
	tree_open(&t, CAPPED);
	assert_true(ends(t.m.cpu.point, "/cgroup/sys/fs/cgroup/cpu"));
	char *b = fixture_read(CAPPED "/proc/" CAPPED_PID "/cgroup", &len);
	assert_int_equal(vms_cgfiles_find(&f, &t.m, b, len), 0);
	free(b);
	assert_true(ends(f.cpu_dir, "/cpu/vms-capped"));
	assert_true(ends(f.v2_dir, "/unified/vms-capped"));
	assert_non_null(f.mem_dir);
	struct vms_vmcg g;
	vms_vmcg_open(&g, f.v2_dir, f.cpu_dir, f.mem_dir, -1);
	snprintf(mem, sizeof(mem), "%s/%s", CAPPED "/cgroup/sys/fs/cgroup", strstr(f.mem_dir, "memory/"));
	vms_cgfiles_free(&f);
	snprintf(cpu, sizeof(cpu), "%s", CAPPED "/cgroup/sys/fs/cgroup/cpu/vms-capped");
	snprintf(uni, sizeof(uni), "%s", CAPPED "/cgroup/sys/fs/cgroup/unified/vms-capped");
	/* no cpu.max, cpu.weight, memory.high or events in a cgroup2 without
	 * controllers; its cpu.stat has no nr_periods: those come from v1 */
	uint32_t want = 0;
	static const unsigned fields[] = {
		VMS_CGF_CPU_QUOTA, VMS_CGF_CPU_PERIOD, VMS_CGF_CPU_SHARES, VMS_CGF_NR_PERIODS,
		VMS_CGF_NR_THROTTLED, VMS_CGF_THROTTLED, VMS_CGF_MEM_MAX, VMS_CGF_EV_OOM_KILL,
		VMS_CGF_ANON, VMS_CGF_FILE, VMS_CGF_SWAP, VMS_CGF_PGMAJFAULT,
		VMS_CGF_PSI_CPU_SOME, VMS_CGF_PSI_CPU_FULL, VMS_CGF_PSI_MEM_SOME, VMS_CGF_PSI_MEM_FULL,
		VMS_CGF_PSI_IO_SOME, VMS_CGF_PSI_IO_FULL,
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(fields); i++)
		want |= 1u << fields[i];
	assert_int_equal(g.have, want);
	assert_int_equal(vms_vmcg_ncols(&g), VMS_ARRAY_SIZE(fields));
	uint64_t s[VMS_CGF_N];
	char scratch[8192];
	uint32_t perr = 0;
	vms_vmcg_sample(&g, s, scratch, sizeof(scratch), true, &perr);
	assert_int_equal(perr, 0);
#define F(x) cgcol(&g, s, VMS_CGF_##x)
#define R(dir, file, key, psi) (snprintf(rel, sizeof(rel), "%s/%s", dir, file), cgval(rel, key, psi))
	assert_int_equal(F(CPU_QUOTA), 25000); /* as the capture set it */
	assert_int_equal(F(CPU_QUOTA), R(cpu, "cpu.cfs_quota_us", NULL, false));
	assert_int_equal(F(CPU_PERIOD), R(cpu, "cpu.cfs_period_us", NULL, false));
	assert_int_equal(F(CPU_SHARES), R(cpu, "cpu.shares", NULL, false));
	assert_int_equal(F(NR_PERIODS), R(cpu, "cpu.stat", "nr_periods", false));
	assert_int_equal(F(NR_THROTTLED), R(cpu, "cpu.stat", "nr_throttled", false));
	assert_int_equal(F(THROTTLED), R(cpu, "cpu.stat", "throttled_time", false));
	/* the cap held: the group ran at most its quota in each period, and
	 * was throttled in most of them */
	uint64_t used_us = R(uni, "cpu.stat", "usage_usec", false);
	assert_true(used_us <= F(CPU_QUOTA) * F(NR_PERIODS));
	assert_true(F(NR_THROTTLED) * 2 > F(NR_PERIODS));
	assert_int_equal(F(MEM_MAX), R(mem, "memory.limit_in_bytes", NULL, false));
	assert_int_equal(F(EV_OOM_KILL), R(mem, "memory.oom_control", "oom_kill", false));
	assert_int_equal(F(ANON), R(mem, "memory.stat", "total_rss", false));
	assert_int_equal(F(FILE), R(mem, "memory.stat", "total_cache", false));
	assert_int_equal(F(SWAP), R(mem, "memory.stat", "total_swap", false));
	assert_int_equal(F(PGMAJFAULT), R(mem, "memory.stat", "total_pgmajfault", false));
	assert_int_equal(F(PSI_CPU_SOME), R(uni, "cpu.pressure", "some", true));
	assert_int_equal(F(PSI_CPU_FULL), R(uni, "cpu.pressure", "full", true));
	assert_true(F(PSI_CPU_SOME) > 0); /* throttled: its task waited */
	assert_int_equal(F(PSI_MEM_SOME), R(uni, "memory.pressure", "some", true));
	/* a tick without the detail files (sources.libvirt.detail_interval):
	 * the memory breakdown, events and pressure missing and not read; the
	 * limits and the throttling there, with the same values (the group is
	 * frozen in the fixture) */
	uint64_t d[VMS_CGF_N];
	uint64_t reads = g.reads;
	vms_vmcg_sample(&g, d, scratch, sizeof(scratch), true, &perr);
	uint64_t full = g.reads - reads;
	reads = g.reads;
	vms_vmcg_sample(&g, d, scratch, sizeof(scratch), false, &perr);
	assert_int_equal(perr, 0);
	unsigned ndetail = 0;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(fields); i++) {
		uint64_t v = cgcol(&g, d, fields[i]);
		if (vms_vmcg_detail(fields[i])) {
			assert_true(v == VMS_NONE);
			ndetail++;
		} else {
			assert_int_equal(v, cgcol(&g, s, fields[i]));
		}
	}
	assert_int_equal(ndetail, 11); /* oom_kill, anon, file, swap, pgmajfault, 6 PSI */
	/* 10 files, 5 of them detail: memory.oom_control, memory.stat, the
	 * three pressure files */
	assert_int_equal(full, 10);
	assert_int_equal(g.reads - reads, 5);
	assert_int_equal(F(PSI_IO_FULL), R(uni, "io.pressure", "full", true));
	vms_vmcg_close(&g);
	tree_close(&t);
}

/* cgroup2 with the memory controller (PCP's cgroups-root-004, a Fedora
 * host of 2019): limits "max", the events, the breakdown, the swap and
 * the pressure; no cpu controller there, so no CPU columns. */
static void test_cg_v2_memory(void **state)
{
	(void)state;
	struct vms_vmcg g;
	char rel[512];
	vms_vmcg_open(&g, fixture_path(V2PCP), NULL, NULL, -1);
	static const unsigned fields[] = {
		VMS_CGF_MEM_MAX, VMS_CGF_MEM_HIGH, VMS_CGF_EV_HIGH, VMS_CGF_EV_MAX, VMS_CGF_EV_OOM,
		VMS_CGF_EV_OOM_KILL, VMS_CGF_ANON, VMS_CGF_FILE, VMS_CGF_SWAP, VMS_CGF_PGMAJFAULT,
		VMS_CGF_PSI_CPU_SOME, VMS_CGF_PSI_MEM_SOME, VMS_CGF_PSI_MEM_FULL, VMS_CGF_PSI_IO_SOME,
		VMS_CGF_PSI_IO_FULL,
	};
	uint32_t want = 0;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(fields); i++)
		want |= 1u << fields[i];
	assert_int_equal(g.have, want); /* no cpu.pressure full line before 5.13 */
	uint64_t s[VMS_CGF_N];
	char scratch[8192];
	uint32_t perr = 0;
	vms_vmcg_sample(&g, s, scratch, sizeof(scratch), true, &perr);
	assert_int_equal(perr, 0);
	assert_true(F(MEM_MAX) == VMS_CG_UNLIMITED); /* "max" */
	assert_true(F(MEM_HIGH) == VMS_CG_UNLIMITED);
	assert_int_equal(F(EV_OOM_KILL), 5);
	assert_int_equal(F(EV_OOM_KILL), R(V2PCP, "memory.events", "oom_kill", false));
	assert_int_equal(F(EV_MAX), R(V2PCP, "memory.events", "max", false));
	assert_int_equal(F(ANON), R(V2PCP, "memory.stat", "anon", false));
	assert_int_equal(F(FILE), R(V2PCP, "memory.stat", "file", false));
	assert_int_equal(F(PGMAJFAULT), R(V2PCP, "memory.stat", "pgmajfault", false));
	assert_int_equal(F(SWAP), R(V2PCP, "memory.swap.current", NULL, false));
	assert_int_equal(F(PSI_MEM_FULL), R(V2PCP, "memory.pressure", "full", true));
	assert_int_equal(F(PSI_IO_SOME), R(V2PCP, "io.pressure", "some", true));
	vms_vmcg_close(&g);
#undef F
#undef R
}

/* The capped process between its two captures (2.28 s apart by their
 * /proc/uptime): rates.c's vm.N.%cap and %thrtl over the cg columns as
 * vm_kernel.c reads them, against the formulas over the files' numbers;
 * the cap holds (it used at most its quota in the periods that elapsed). */
static void test_cg_rates(void **state)
{
	(void)state;
	static const char *const names[] = {"vm.capped.cpu_time", "vm.capped.cg.cpu_quota_us",
					    "vm.capped.cg.cpu_period_us", "vm.capped.cg.nr_periods",
					    "vm.capped.cg.nr_throttled", "vm.capped.cg.psi.cpu.some.total"};
	static const unsigned fields[] = {0, VMS_CGF_CPU_QUOTA, VMS_CGF_CPU_PERIOD, VMS_CGF_NR_PERIODS,
					  VMS_CGF_NR_THROTTLED, VMS_CGF_PSI_CPU_SOME};
	const char *fix[2] = {CAPPED, CAPPED1};
	uint64_t v[2][6];
	double up[2];
	char rel[1200];
	for (int k = 0; k < 2; k++) {
		struct vms_vmcg g;
		char d2[900], d1[900];
		snprintf(d2, sizeof(d2), "%s/cgroup/sys/fs/cgroup/unified/vms-capped", fixture_path(fix[k]));
		snprintf(d1, sizeof(d1), "%s/cgroup/sys/fs/cgroup/cpu/vms-capped", fixture_path(fix[k]));
		vms_vmcg_open(&g, d2, d1, NULL, -1);
		uint64_t s[VMS_CGF_N];
		char scratch[8192];
		uint32_t perr = 0;
		vms_vmcg_sample(&g, s, scratch, sizeof(scratch), true, &perr);
		assert_int_equal(perr, 0);
		snprintf(rel, sizeof(rel), "%s/cgroup/sys/fs/cgroup/unified/vms-capped/cpu.stat", fix[k]);
		v[k][0] = cgval(rel, "usage_usec", false) * 1000; /* as vm.N.cpu_time */
		for (int i = 1; i < 6; i++)
			v[k][i] = cgcol(&g, s, fields[i]);
		vms_vmcg_close(&g);
		size_t len;
		snprintf(rel, sizeof(rel), "%s/uptime", fix[k]);
		char *b = fixture_read(rel, &len);
		up[k] = strtod(b, NULL);
		free(b);
	}
	struct vms_col cols[6];
	for (int i = 0; i < 6; i++) {
		const struct vms_catfield *fi = vms_catalog_entry(VMS_G_VMCG, fields[i]);
		cols[i] = (struct vms_col){.name = names[i], .key = "", .kind = i ? fi->kind : VMS_KIND_COUNTER,
					   .unit = i ? fi->unit : VMS_UNIT_NS, .wrap_bits = 64};
		if (cols[i].kind == VMS_KIND_GAUGE)
			cols[i].wrap_bits = 0;
	}
	struct vms_schema *sch;
	assert_int_equal(vms_schema_new(1, 0, 6, cols, &sch), 0);
	struct vms_rate_plan *p;
	assert_int_equal(vms_rate_plan_new(sch, &p), 0);
	double dt[6], out[64], DT = up[1] - up[0];
	for (int i = 0; i < 6; i++)
		dt[i] = DT;
	assert_true(p->ncols <= VMS_ARRAY_SIZE(out));
	vms_rate_compute_dt(p, v[0], v[1], dt, out);
	double cap = NAN, thr = NAN, psi = NAN;
	for (uint32_t k = 0; k < p->ncols; k++) {
		if (!strcmp(p->cols[k].name, "vm.capped.%cap"))
			cap = out[k];
		else if (!strcmp(p->cols[k].name, "vm.capped.%thrtl"))
			thr = out[k];
		else if (!strcmp(p->cols[k].name, "vm.capped.cg.psi.cpu.%some"))
			psi = out[k];
	}
	double dused = (double)(v[1][0] - v[0][0]), share = (double)v[1][1] / (double)v[1][2];
	double want_cap = dused / DT / 1e9 / share * 100;
	double want_thr = (double)(v[1][4] - v[0][4]) / (double)(v[1][3] - v[0][3]) * 100;
	double want_psi = (double)(v[1][5] - v[0][5]) / 1e4 / DT;
	if (!(fabs(cap - want_cap) < 1e-9 * want_cap && fabs(thr - want_thr) < 1e-9 * want_thr &&
	      fabs(psi - want_psi) < 1e-9 * want_psi))
		fail_msg("%%cap %.6f (want %.6f), %%thrtl %.6f (want %.6f), psi %.6f (want %.6f)", cap, want_cap, thr,
			 want_thr, psi, want_psi);
	/* the cap held: no more than the quota in each elapsed period */
	assert_true(dused <= (double)v[1][1] * 1000 * (double)(v[1][3] - v[0][3]));
	assert_true(cap <= 100.5 && cap > 50); /* busy all the time it was not stopped */
	assert_true(thr > 50);
	vms_rate_plan_free(p);
	/* without a quota ("max"): no %cap, not 0 */
	v[1][1] = VMS_CG_UNLIMITED;
	assert_int_equal(vms_rate_plan_new(sch, &p), 0);
	vms_rate_compute_dt(p, v[0], v[1], dt, out);
	for (uint32_t k = 0; k < p->ncols; k++)
		if (!strcmp(p->cols[k].name, "vm.capped.%cap"))
			assert_true(isnan(out[k]));
	vms_rate_plan_free(p);
	vms_schema_unref(sch);
}

/* cgroup limits: numbers, "max", v1's "-1"; cpu.max's two fields. */
static void test_cg_limits(void **state)
{
	(void)state;
	uint64_t v, q, p;
	assert_int_equal(vms_parse_cg_limit("max\n", 4, &v), 0);
	assert_true(v == VMS_CG_UNLIMITED);
	assert_int_equal(vms_parse_cg_limit("-1\n", 3, &v), 0);
	assert_true(v == VMS_CG_UNLIMITED);
	assert_int_equal(vms_parse_cg_limit("9223372036854771712\n", 20, &v), 0);
	assert_true(v == UINT64_C(9223372036854771712));
	assert_int_equal(vms_parse_cpu_max("max 100000\n", 11, &q, &p), 0);
	assert_true(q == VMS_CG_UNLIMITED);
	assert_int_equal(p, 100000);
	assert_int_equal(vms_parse_cpu_max("25000 100000\n", 13, &q, &p), 0);
	assert_int_equal(q, 25000);
	assert_int_equal(p, 100000);
	static const char *const bad[] = {"", "maxx\n", "-2\n", "1 2\n", "max\nmax\n", "18446744073709551614\n",
					  "x\n"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++)
		if (vms_parse_cg_limit(bad[i], strlen(bad[i]), &v) == 0)
			fail_msg("limit '%s' accepted", bad[i]);
	static const char *const badmax[] = {"25000\n", "max max\n", "25000 0\n", "-1 100000\n", "1 2 3\n"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(badmax); i++)
		if (vms_parse_cpu_max(badmax[i], strlen(badmax[i]), &q, &p) == 0)
			fail_msg("cpu.max '%s' accepted", badmax[i]);
	/* a damaged file at sample time: its fields missing, counted */
	char *dir = tmpdir_make(), path[600];
	snprintf(path, sizeof(path), "%s/cpu.max", dir);
	write_file(path, "25000 100000\n", 13);
	snprintf(path, sizeof(path), "%s/memory.events", dir);
	write_file(path, "high 1\nmax 2\noom 0\noom_kill 0\n", 30);
	struct vms_vmcg g;
	vms_vmcg_open(&g, dir, NULL, NULL, -1);
	assert_int_equal(vms_vmcg_ncols(&g), 6);
	snprintf(path, sizeof(path), "%s/cpu.max", dir);
	write_file(path, "25000 x\n", 8);
	uint64_t s[VMS_CGF_N];
	char scratch[256];
	uint32_t perr = 0;
	vms_vmcg_sample(&g, s, scratch, sizeof(scratch), true, &perr);
	assert_int_equal(perr, 1);
	assert_true(s[0] == VMS_NONE && s[1] == VMS_NONE);
	assert_int_equal(s[2], 1); /* ev_high */
	assert_int_equal(s[3], 2);
	vms_vmcg_close(&g);
	tmpdir_free(dir);
}

/* Limits are read again only after a write to them (vm_kernel.h): the
 * files of a v2 group in a tmpfs directory, written with write(2) as
 * libvirt writes cgroupfs (each write queues IN_MODIFY), the reads of
 * the tick counted. */
static unsigned watches(int ino)
{
	char path[64], line[256];
	unsigned n = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ino);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strncmp(line, "inotify wd:", 11) == 0;
	fclose(f);
	return n;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path, text, strlen(text));
}

static void test_cg_watch(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	put(dir, "cpu.max", "max 100000\n");
	put(dir, "cpu.weight", "100\n");
	put(dir, "cpu.weight.nice", "0\n");
	put(dir, "memory.max", "max\n");
	put(dir, "memory.high", "1073741824\n");
	put(dir, "cpu.stat", "usage_usec 10\nnr_periods 5\nnr_throttled 1\nthrottled_usec 7\n");
	put(dir, "memory.events", "low 0\nhigh 1\nmax 2\noom 0\noom_kill 0\n");
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ino >= 0);
	struct vms_vmcg g;
	vms_vmcg_open(&g, dir, NULL, NULL, ino);
	/* quota, period, weight, nr_periods, nr_throttled, throttled, mem_max,
	 * mem_high, 4 events */
	assert_int_equal(vms_vmcg_ncols(&g), 12);
	assert_int_equal(watches(ino), 5); /* 4 limits and cpu.weight.nice */
	uint64_t s[VMS_CGF_N];
	char scratch[256];
	uint32_t perr = 0;
#define COL(f) s[__builtin_popcount(g.have & ((1u << (f)) - 1))]
#define SAMPLE() (vms_vmcg_drain(ino, &g, sizeof(g), 1), vms_vmcg_sample(&g, s, scratch, sizeof(scratch), true, &perr))
	/* the first tick: the limits from the open's read, the rest read */
	SAMPLE();
	assert_int_equal(g.reads, 2);
	assert_true(COL(VMS_CGF_CPU_QUOTA) == VMS_CG_UNLIMITED);
	assert_int_equal(COL(VMS_CGF_CPU_PERIOD), 100000);
	assert_int_equal(COL(VMS_CGF_CPU_WEIGHT), 100);
	assert_int_equal(COL(VMS_CGF_MEM_HIGH), 1073741824);
	assert_int_equal(COL(VMS_CGF_THROTTLED), 7000);
	/* nothing written: memory.events only (no quota: cpu.stat's counters
	 * stand, test_cg_unlimited) */
	SAMPLE();
	assert_int_equal(g.reads, 3);
	assert_int_equal(COL(VMS_CGF_THROTTLED), 7000);
	/* a new cap: read at the next tick, once; cpu.stat from then on */
	put(dir, "cpu.max", "25000 100000\n");
	SAMPLE();
	assert_int_equal(g.reads, 6);
	assert_int_equal(COL(VMS_CGF_CPU_QUOTA), 25000);
	SAMPLE();
	assert_int_equal(g.reads, 8);
	assert_int_equal(COL(VMS_CGF_CPU_QUOTA), 25000);
	/* cpu.weight.nice sets cpu.weight: a write to it reads cpu.weight
	 * (here the kernel's side is played by a write to both) */
	put(dir, "cpu.weight.nice", "5\n");
	SAMPLE();
	assert_int_equal(g.reads, 11);
	/* two writes to two limits between ticks: both */
	put(dir, "memory.max", "536870912\n");
	put(dir, "memory.high", "max\n");
	SAMPLE();
	assert_int_equal(g.reads, 15);
	assert_int_equal(COL(VMS_CGF_MEM_MAX), 536870912);
	assert_true(COL(VMS_CGF_MEM_HIGH) == VMS_CG_UNLIMITED);
	/* a damaged limit: missing and counted, and read again each tick
	 * until it parses */
	put(dir, "cpu.max", "25000 x\n");
	SAMPLE();
	assert_int_equal(perr, 1);
	assert_true(COL(VMS_CGF_CPU_QUOTA) == VMS_NONE && COL(VMS_CGF_CPU_PERIOD) == VMS_NONE);
	SAMPLE();
	assert_int_equal(perr, 2);
	assert_int_equal(g.reads, 21);
	put(dir, "cpu.max", "50000 100000\n");
	SAMPLE();
	assert_int_equal(COL(VMS_CGF_CPU_QUOTA), 50000);
	assert_int_equal(g.reads, 24);
	SAMPLE();
	assert_int_equal(g.reads, 26);
	/* the queue overflowed: every limit is read */
	vms_vmcg_stale(&g);
	SAMPLE();
	assert_int_equal(g.reads, 32);
	/* a watch the kernel dropped (its IN_IGNORED): that file each tick */
	int wd0 = g.wd[0];
	assert_int_equal(inotify_rm_watch(ino, wd0), 0);
	SAMPLE();
	assert_int_equal(g.wd[0], -1);
	assert_int_equal(g.reads, 32 + 3);
	SAMPLE();
	assert_int_equal(g.reads, 32 + 3 + 3);
	assert_false(vms_vmcg_notify(&g, wd0, IN_MODIFY));
	assert_int_equal(COL(VMS_CGF_CPU_QUOTA), 50000);
	/* without an instance: everything each tick, the same values */
	vms_vmcg_close(&g);
	assert_int_equal(watches(ino), 0);
	vms_vmcg_open(&g, dir, NULL, NULL, -1);
	vms_vmcg_sample(&g, s, scratch, sizeof(scratch), true, &perr);
	vms_vmcg_sample(&g, s, scratch, sizeof(scratch), true, &perr);
	assert_int_equal(g.reads, 12);
	assert_int_equal(COL(VMS_CGF_CPU_QUOTA), 50000);
	assert_int_equal(COL(VMS_CGF_MEM_MAX), 536870912);
#undef SAMPLE
#undef COL
	vms_vmcg_close(&g);
	close(ino);
	tmpdir_free(dir);
}

/* A group without a quota: its throttling counters cannot move
 * (vm_kernel.c, the kernel's do_sched_cfs_period_timer and
 * tg_set_cfs_bandwidth), so with the quota file watched and unlimited
 * cpu.stat is read once after the quota was seen so and its values given
 * again; a quota written makes it read again, every tick while capped;
 * the quota removed, one more read (the final values), then none.  A v2
 * group (cpu.max "max 100000") and a v1 one (cpu.cfs_quota_us -1) in
 * tmpfs directories; the counters are changed on disk where the kernel
 * could not, to show that the file is not read. */
struct unl {
	char *dir;
	bool v1;
	struct vms_vmcg g;
	uint64_t s[VMS_CGF_N];
	uint32_t perr;
};

static void unl_stat(struct unl *u, unsigned periods, unsigned throttled, unsigned t)
{
	char b[256];
	if (u->v1)
		snprintf(b, sizeof(b), "nr_periods %u\nnr_throttled %u\nthrottled_time %u\n", periods, throttled, t);
	else
		snprintf(b, sizeof(b),
			 "usage_usec 90\nuser_usec 60\nsystem_usec 30\nnr_periods %u\nnr_throttled %u\n"
			 "throttled_usec %u\n",
			 periods, throttled, t);
	put(u->dir, "cpu.stat", b);
}

static void unl_quota(struct unl *u, bool capped)
{
	if (u->v1)
		put(u->dir, "cpu.cfs_quota_us", capped ? "25000\n" : "-1\n");
	else
		put(u->dir, "cpu.max", capped ? "25000 100000\n" : "max 100000\n");
}

/* One tick (the instance drained first, as vm_sample does): the files it
 * read. */
static uint64_t unl_tick(struct unl *u, bool detail)
{
	char scratch[512];
	uint64_t before = u->g.reads;
	if (u->g.ino >= 0)
		vms_vmcg_drain(u->g.ino, &u->g, sizeof(u->g), 1);
	vms_vmcg_sample(&u->g, u->s, scratch, sizeof(scratch), detail, &u->perr);
	return u->g.reads - before;
}

/* The tick's throttling columns are (periods, throttled, t) of the file
 * (t in its unit: us in cgroup2, ns in v1). */
static void unl_expect(const struct unl *u, uint64_t periods, uint64_t throttled, uint64_t t)
{
	const uint64_t *s = u->s;
	uint32_t have = u->g.have;
#define UCOL(f) s[__builtin_popcount(have & ((1u << (f)) - 1))]
	assert_int_equal(UCOL(VMS_CGF_NR_PERIODS), periods);
	assert_int_equal(UCOL(VMS_CGF_NR_THROTTLED), throttled);
	assert_int_equal(UCOL(VMS_CGF_THROTTLED), t * (u->v1 ? 1 : 1000));
#undef UCOL
}

static uint64_t unl_quota_col(const struct unl *u)
{
	return u->s[__builtin_popcount(u->g.have & ((1u << VMS_CGF_CPU_QUOTA) - 1))];
}

static void unl_open(struct unl *u, int ino)
{
	vms_vmcg_open(&u->g, u->v1 ? NULL : u->dir, u->v1 ? u->dir : NULL, NULL, ino);
	uint32_t thr = 1u << VMS_CGF_NR_PERIODS | 1u << VMS_CGF_NR_THROTTLED | 1u << VMS_CGF_THROTTLED;
	assert_int_equal(u->g.have & thr, thr);
	assert_true(u->g.have & (1u << VMS_CGF_CPU_QUOTA));
}

static void check_unlimited(bool v1)
{
	struct unl *u = calloc(1, sizeof(*u));
	u->v1 = v1;
	u->dir = tmpdir_make();
	unl_quota(u, false);
	if (v1) {
		put(u->dir, "cpu.cfs_period_us", "100000\n");
	} else {
		/* detail files: read on the detail ticks only */
		put(u->dir, "memory.events", "low 0\nhigh 1\nmax 2\noom 0\noom_kill 0\n");
		put(u->dir, "cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=12\n");
	}
	unl_stat(u, 5, 1, 7);
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ino >= 0);
	unl_open(u, ino);
	const uint64_t ndetail = v1 ? 0 : 2;

	/* (a) the first tick reads cpu.stat (the limits come from the open's
	 * read), the next ones do not: the same values */
	assert_int_equal(unl_tick(u, true), 1 + ndetail);
	assert_true(unl_quota_col(u) == VMS_CG_UNLIMITED);
	unl_expect(u, 5, 1, 7);
	assert_int_equal(unl_tick(u, true), ndetail);
	unl_expect(u, 5, 1, 7);
	/* a tick without the detail files: nothing read at all */
	assert_int_equal(unl_tick(u, false), 0);
	unl_expect(u, 5, 1, 7);
	/* counters changed where the kernel could not: still the last read's
	 * (the file is not read) */
	unl_stat(u, 9, 3, 11);
	assert_int_equal(unl_tick(u, false), 0);
	unl_expect(u, 5, 1, 7);

	/* (b) a quota written: the quota and cpu.stat read at the next tick,
	 * cpu.stat each tick while capped */
	unl_quota(u, true);
	assert_int_equal(unl_tick(u, false), 2);
	assert_int_equal(unl_quota_col(u), 25000);
	unl_expect(u, 9, 3, 11);
	unl_stat(u, 12, 6, 20);
	assert_int_equal(unl_tick(u, false), 1);
	unl_expect(u, 12, 6, 20);
	assert_int_equal(unl_tick(u, true), 1 + ndetail);

	/* (c) the quota removed: one more read (the unthrottle at the removal
	 * added its throttled time), then none */
	unl_quota(u, false);
	unl_stat(u, 13, 7, 25);
	assert_int_equal(unl_tick(u, false), 2);
	assert_true(unl_quota_col(u) == VMS_CG_UNLIMITED);
	unl_expect(u, 13, 7, 25);
	unl_stat(u, 99, 99, 99);
	assert_int_equal(unl_tick(u, false), 0);
	assert_int_equal(unl_tick(u, true), ndetail);
	unl_expect(u, 13, 7, 25);

	/* a quota set and removed between two ticks: the counters may have
	 * moved meanwhile, so the unlimited quota read again is not enough:
	 * cpu.stat is read too */
	unl_quota(u, true);
	unl_stat(u, 14, 8, 30);
	unl_quota(u, false);
	assert_int_equal(unl_tick(u, false), 2);
	unl_expect(u, 14, 8, 30);
	assert_int_equal(unl_tick(u, false), 0);
	/* so after an overflow of the queue */
	unl_stat(u, 15, 8, 31);
	vms_vmcg_stale(&u->g);
	assert_int_equal(unl_tick(u, false), v1 ? 3 : 2); /* v1: cfs_period_us too */
	unl_expect(u, 15, 8, 31);
	assert_int_equal(unl_tick(u, false), 0);
	assert_int_equal(u->perr, 0);
	vms_vmcg_close(&u->g);

	/* without a watch the quota read as unlimited at each tick says
	 * nothing of the time between: cpu.stat every tick */
	unl_open(u, -1);
	for (int k = 0; k < 3; k++) {
		unl_stat(u, 20 + (unsigned)k, 9, 40);
		assert_int_equal(unl_tick(u, false), v1 ? 3 : 2);
		unl_expect(u, 20 + (uint64_t)k, 9, 40);
	}
	vms_vmcg_close(&u->g);
	close(ino);
	tmpdir_free(u->dir);
	free(u);
}

static void test_cg_unlimited(void **state)
{
	(void)state;
	check_unlimited(false);
	check_unlimited(true);
}

VMS_TEST_MAIN(NULL, NULL, test_cg_capped_v1, test_cg_v2_memory, test_cg_rates, test_cg_limits, test_cg_watch,
	test_cg_unlimited,
	test_taskstat, test_schedstat, test_keyed, test_iostat, test_pidcg_mountinfo,
	test_cgroup_lookup, test_reader_v2_equals_libvirt, test_reader_rss_detail, test_reader_v1_and_missing,
	test_reader_gone, test_cpulist, test_reader_placement, test_cg_detail_fields, test_taps_netlink, test_layout)
