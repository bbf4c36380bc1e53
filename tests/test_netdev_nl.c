/* SPDX-License-Identifier: MIT */
/* test_netdev_nl.c - the netdev source's netlink backend (RTM_GETSTATS)
 * against /proc/net/dev read by the test around each sample: every
 * counter lies between the file's value before and after (on this
 * machine's interfaces, and in a network namespace of the test's own with
 * veth pairs and ifb devices it creates and sends frames through); both
 * backends declare the same columns; interfaces that come, go or are
 * renamed give VMS_RESCHEMA as with the file; the file is the fallback
 * where netlink is refused (a seccomp filter), and the netlink backend
 * when forced there stops the run.  The allocator is wrapped: the tick
 * allocates nothing. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <arpa/inet.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "config.h"
#include "netdev_nl.h"
#include "source.h"
#include "srcdrv.h"

extern const struct vms_source_ops vms_source_netdev;

static const char *const fields[] = {
	"rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame", "rx_compressed",
	"rx_multicast", "tx_bytes", "tx_packets", "tx_errs", "tx_drop", "tx_fifo", "tx_colls",
	"tx_carrier", "tx_compressed",
};

/* /proc/net/dev as the test reads it (its own read, not the source's). */
static char *read_netdev(void)
{
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	int fd = open("/proc/net/dev", O_RDONLY | O_CLOEXEC);
	if (!b || fd < 0)
		abort();
	for (ssize_t n; (n = read(fd, b + len, cap - len - 1)) > 0;) {
		len += (size_t)n;
		if (cap - len < 2 && !(b = realloc(b, cap *= 2)))
			abort();
	}
	close(fd);
	b[len] = '\0';
	return b;
}

/* The value of field fi of interface name in the text: the line whose text
 * before its last ':' is the name (after blanks), fields by position. */
static bool ref(const char *text, const char *name, int fi, uint64_t *out)
{
	const char *l = strchr(text, '\n');
	l = l ? strchr(l + 1, '\n') : NULL; /* two header lines */
	while (l && *++l) {
		const char *end = strchr(l, '\n'), *colon = NULL;
		if (!end)
			end = l + strlen(l);
		for (const char *q = l; q < end; q++)
			if (*q == ':')
				colon = q;
		const char *n = l + strspn(l, " ");
		if (colon && (size_t)(colon - n) == strlen(name) && memcmp(n, name, strlen(name)) == 0) {
			char *p = (char *)colon + 1;
			for (int i = 0; i <= fi; i++)
				*out = strtoull(p, &p, 10);
			return true;
		}
		l = *end ? end : NULL;
	}
	return false;
}

/* Every column "net.<if>.<field>" lies in [before, after] of the file:
 * the count of those that do not (each said on stderr). */
static unsigned bracket_bad(const struct vms_schema *s, const uint64_t *slots, const char *before,
			    const char *after)
{
	unsigned bad = 0;
	for (uint32_t i = 0; i < s->ncols; i++) {
		const char *c = s->cols[i].name, *dot = strrchr(c, '.');
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(dot - c - 4), c + 4);
		int fi = -1;
		for (int k = 0; k < 16; k++)
			if (strcmp(dot + 1, fields[k]) == 0)
				fi = k;
		uint64_t b = 0, a = 0;
		if (strncmp(c, "net.", 4) || fi < 0 || !ref(before, name, fi, &b) || !ref(after, name, fi, &a) ||
		    slots[i] < b || slots[i] > a) {
			fprintf(stderr, "%s: %llu not in [%llu, %llu]\n", c, (unsigned long long)slots[i],
				(unsigned long long)b, (unsigned long long)a);
			bad++;
		}
	}
	return bad;
}

static struct drv *drv_backend(int backend)
{
	struct vms_source_conf sc = {.every = 1, .backend = backend};
	return drv_new_conf("/proc", &vms_source_netdev, &sc);
}

/* Declared, then sampled between two reads of the file (again when an
 * interface came or went meanwhile); the file's texts in *before, *after. */
static void sample_bracketed(struct drv *d, char **before, char **after)
{
	for (unsigned attempt = 0;; attempt++) {
		assert_true(attempt < 20);
		assert_int_equal(drv_declare(d), 0);
		*before = read_netdev();
		int r = drv_sample(d);
		*after = read_netdev();
		if (r == 0)
			return;
		assert_int_equal(r, VMS_RESCHEMA);
		free(*before);
		free(*after);
	}
}

static void check_bracketed(struct drv *d)
{
	char *before, *after;
	sample_bracketed(d, &before, &after);
	assert_true(d->src.ncols > 0);
	assert_int_equal(bracket_bad(d->schema, d->slots, before, after), 0);
	free(before);
	free(after);
}

/* Both backends on /proc: the same columns, in the same order. */
static void check_same_columns(void)
{
	struct drv *nl = drv_backend(VMS_NETDEV_AUTO), *fs = drv_backend(VMS_NETDEV_PROCFS);
	assert_true(vms_netdev_netlink(&nl->src));
	assert_false(vms_netdev_netlink(&fs->src));
	bool same = false;
	for (unsigned attempt = 0; !same && attempt < 20; attempt++) {
		assert_int_equal(drv_declare(nl), 0);
		assert_int_equal(drv_declare(fs), 0);
		same = vms_schema_same_columns(nl->schema, fs->schema);
	}
	assert_true(same);
	assert_int_equal(nl->src.ncols % 16, 0);
	drv_close(nl);
	drv_close(fs);
}

static void test_host_interfaces(void **state)
{
	(void)state;
	check_same_columns();
	struct drv *d = drv_backend(VMS_NETDEV_NETLINK);
	assert_true(vms_netdev_netlink(&d->src));
	for (unsigned i = 0; i < 5; i++)
		check_bracketed(d);
	drv_close(d);
}

/* ---- a network namespace of the test's own ------------------------------- */

static int orig_ns = -1;

static int leave_ns(void **state);

/* Enter a new network namespace (root), where `cmds` (ip commands, one a
 * line) run; leave_ns() destroys it with all its interfaces. */
static void enter_ns(const char *cmds)
{
	if (geteuid() != 0)
		vms_skip("VMS_REQUIRE_ROOT", "a network namespace with veth and ifb devices needs root");
	leave_ns(NULL); /* a test that failed in its own */
	orig_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(orig_ns >= 0);
	assert_int_equal(unshare(CLONE_NEWNET), 0);
	char *c = strdup(cmds);
	assert_non_null(c);
	char *save = NULL;
	for (char *l = strtok_r(c, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "ip %s", l);
		if (system(cmd) != 0) {
			free(c);
			fail_msg("%s failed", cmd);
		}
	}
	free(c);
}

static int leave_ns(void **state)
{
	(void)state;
	if (orig_ns >= 0) {
		if (setns(orig_ns, CLONE_NEWNET) != 0)
			abort(); /* the next tests would run in the wrong namespace */
		close(orig_ns);
		orig_ns = -1;
	}
	return 0;
}

/* n Ethernet broadcast frames of 100 bytes out of interface `ifname`. */
static void send_frames(const char *ifname, unsigned n)
{
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	struct sockaddr_ll sa = {.sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(ifname),
				 .sll_halen = ETH_ALEN, .sll_protocol = htons(0x88b5)};
	assert_true(sa.sll_ifindex > 0);
	memset(sa.sll_addr, 0xff, ETH_ALEN);
	unsigned char f[100] = {0};
	memset(f, 0xff, ETH_ALEN);
	f[12] = 0x88, f[13] = 0xb5; /* IEEE local experimental ethertype */
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(sendto(s, f, sizeof(f), 0, (struct sockaddr *)&sa, sizeof(sa)), (ssize_t)sizeof(f));
	close(s);
}

/* Wait (5 s at most) until the kernel's link watch has brought ifname up:
 * until then a veth has its noop qdisc and drops what is sent on it,
 * uncounted (the link watch runs up to a second late on a busy host) */
static void wait_up(const char *ifname)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "ip -o link show dev %s | grep -q 'state UP'", ifname);
	for (int i = 0; i < 500; i++) {
		if (system(cmd) == 0)
			return;
		usleep(10000);
	}
	fail_msg("%s did not come up in 5 s", ifname);
}

static void test_created_interfaces(void **state)
{
	(void)state;
	enter_ns("link set lo up\n"
		 "link add nlt0a type veth peer name nlt0b\n"
		 "link add nlt1a type veth peer name nlt1b\n"
		 "link add nlifb0 type ifb\n"
		 "link set nlt0a up\nlink set nlt0b up\nlink set nlt1a up\nlink set nlt1b up\n");
	check_same_columns();
	struct drv *d = drv_backend(VMS_NETDEV_NETLINK);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->src.ncols, 6 * 16); /* lo, 2 veth pairs, ifb */
	assert_int_equal(drv_sample(d), 0);
	uint64_t tx0 = val(d, "net.nlt0a.tx_packets"), rx0 = val(d, "net.nlt0b.rx_packets");
	uint64_t txb0 = val(d, "net.nlt0a.tx_bytes");
	wait_up("nlt0a");
	wait_up("nlt0b");
	wait_up("nlt1b");
	send_frames("nlt0a", 500);
	send_frames("nlt1b", 77);
	char *before, *after;
	before = read_netdev();
	assert_int_equal(drv_sample(d), 0);
	after = read_netdev();
	assert_int_equal(bracket_bad(d->schema, d->slots, before, after), 0);
	/* the frames are counted: out of nlt0a, into its peer */
	assert_true(val(d, "net.nlt0a.tx_packets") - tx0 >= 500);
	assert_true(val(d, "net.nlt0a.tx_bytes") - txb0 >= 500 * 100);
	assert_true(val(d, "net.nlt0b.rx_packets") - rx0 >= 500);
	assert_true(val(d, "net.nlt1b.tx_packets") >= 77);
	free(before);
	free(after);
	drv_close(d);
}

/* Interfaces that come, go or are renamed: VMS_RESCHEMA from both
 * backends, and the new declaration has the new set. */
static void test_come_and_go(void **state)
{
	(void)state;
	enter_ns("link add nlc0 type ifb\n");
	struct drv *nl = drv_backend(VMS_NETDEV_NETLINK), *fs = drv_backend(VMS_NETDEV_PROCFS);
	struct drv *both[] = {nl, fs};
	char names[512];
	static const struct {
		const char *cmd, *after;
	} step[] = {
		{"ip link add nlc1 type ifb", "lo nlc0 nlc1"},
		{"ip link del nlc0", "lo nlc1"},
		{"ip link set dev nlc1 name nlc2", "lo nlc2"},
		/* the peer is registered first: a lower ifindex, before it in the file */
		{"ip link add nlc3 type veth peer name nlc4", "lo nlc2 nlc4 nlc3"},
	};
	for (unsigned k = 0; k < 2; k++) {
		assert_int_equal(drv_declare(both[k]), 0);
		assert_int_equal(drv_sample(both[k]), 0);
	}
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(step); i++) {
		assert_int_equal(system(step[i].cmd), 0);
		for (unsigned k = 0; k < 2; k++) {
			struct drv *d = both[k];
			if (drv_sample(d) != VMS_RESCHEMA)
				fail_msg("step %u (%s), %s: no VMS_RESCHEMA", i, step[i].cmd, k ? "procfs" : "netlink");
			assert_int_equal(drv_declare(d), 0);
			assert_int_equal(drv_sample(d), 0);
			drv_entities(d, "net.", ".rx_bytes", names, sizeof(names));
			assert_string_equal(names, step[i].after);
		}
		assert_true(vms_schema_same_columns(nl->schema, fs->schema));
	}
	/* a change of state that is no change of name: nothing to declare */
	assert_int_equal(system("ip link set dev nlc2 up"), 0);
	assert_int_equal(drv_sample(nl), 0);
	drv_close(nl);
	drv_close(fs);
}

/* The netlink tick allocates nothing (here: ~130 interfaces in a namespace
 * of its own, more than one reply datagram per dump, where root can make them). */
static void test_no_allocation(void **state)
{
	(void)state;
	char cmds[8192];
	size_t n = (size_t)snprintf(cmds, sizeof(cmds), "link set lo up\n");
	if (geteuid() == 0)
		for (unsigned i = 0; i < 64; i++)
			n += (size_t)snprintf(cmds + n, sizeof(cmds) - n, "link add nla%u type veth peer name nlb%u\n", i, i);
	bool ns = geteuid() == 0;
	if (ns)
		enter_ns(cmds);
	struct drv *d = drv_backend(VMS_NETDEV_NETLINK);
	char *before, *after;
	sample_bracketed(d, &before, &after);
	free(before);
	free(after);
	if (ns)
		assert_int_equal(d->src.ncols, (1 + 128) * 16);
	uint32_t errs;
	assert_int_equal(drv_sample_allocs(d, 1000, true, &errs), 0);
	assert_int_equal(errs, 0);
	drv_close(d);
}

/* ---- netlink refused ------------------------------------------------------ */

/* socket(AF_NETLINK, ...) fails with EPERM for this process from now on. */
static int refuse_netlink(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = VMS_ARRAY_SIZE(f), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return -1;
	return 0;
}

/* In the child (no cmocka there): the exit status says what went wrong. */
static int refused_child(void)
{
	if (refuse_netlink() != 0)
		return 10;
	if (socket(AF_NETLINK, SOCK_RAW, 0) >= 0 || errno != EPERM)
		return 11;
	int dirfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct vms_source_conf sc = {.enabled = true, .every = 1, .backend = VMS_NETDEV_AUTO};
	struct vms_source src = {.ops = &vms_source_netdev, .sconf = &sc, .proc_dirfd = dirfd};
	static uint64_t slots[8192];
	/* no VM set; netdev reads neither the clock nor queues events */
	const struct vms_source_env env = {0};
	src.priv = calloc(1, vms_source_netdev.priv_size);
	if (vms_source_netdev.open(&src, &env) != 0)
		return 12;
	if (vms_netdev_netlink(&src))
		return 13; /* auto: the file */
	for (unsigned attempt = 0;; attempt++) {
		struct vms_schema_builder b;
		struct vms_schema *s = NULL;
		vms_schema_builder_init(&b);
		vms_schema_builder_source(&b, 0);
		if (attempt > 10 || vms_source_netdev.declare(&src, &b, &env) != 0)
			return 14;
		if (vms_schema_builder_count(&b) == 0 || vms_schema_finish(&b, 1, 0, &s) != 0)
			return 15;
		vms_schema_builder_free(&b);
		char *before = read_netdev();
		struct vms_tick_ctx t = {.idx = 1 + attempt};
		int r = vms_source_netdev.sample(&src, slots, &t);
		char *after = read_netdev();
		unsigned bad = r == 0 ? bracket_bad(s, slots, before, after) : 0;
		free(before);
		free(after);
		vms_schema_unref(s);
		if (bad)
			return 16;
		if (r == 0)
			break;
		if (r != VMS_RESCHEMA)
			return 17;
	}
	vms_source_netdev.close(&src);
	free(src.priv);
	/* forced: the run does not start, the source says why */
	sc.backend = VMS_NETDEV_NETLINK;
	struct vms_source forced = {.ops = &vms_source_netdev, .sconf = &sc, .proc_dirfd = dirfd};
	forced.priv = calloc(1, vms_source_netdev.priv_size);
	if (vms_source_netdev.open(&forced, &env) != -EPERM || !forced.fatal)
		return 18;
	vms_source_netdev.close(&forced);
	free(forced.priv);
	close(dirfd);
	return 0;
}

static void test_refused(void **state)
{
	(void)state;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(refused_child());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* without the filter, auto is netlink here: the test above tests the fallback */
	struct drv *d = drv_backend(VMS_NETDEV_AUTO);
	assert_true(vms_netdev_netlink(&d->src));
	drv_close(d);
	/* a proc root that is no procfs (a fixture): the file, even in auto */
	d = drv_new_conf(root("roots/jtsys-em1-em2-nonl"), &vms_source_netdev, NULL);
	assert_false(vms_netdev_netlink(&d->src));
	drv_close(d);
}

/* The kernel's struct as /proc/net/dev sums it (net/core/net-procfs.c),
 * and a shorter struct of an older kernel: the missing members 0. */
static void test_fields(void **state)
{
	(void)state;
	uint64_t s[32], v[16];
	for (unsigned i = 0; i < 32; i++)
		s[i] = 1000 + i; /* rx_packets tx_packets rx_bytes tx_bytes rx_errors ... */
	vms_nl_fields(s, 24 * 8, v);
	/* rtnl_link_stats64 member order: 0 rx_packets 1 tx_packets 2 rx_bytes
	 * 3 tx_bytes 4 rx_errors 5 tx_errors 6 rx_dropped 7 tx_dropped
	 * 8 multicast 9 collisions 10 rx_length 11 rx_over 12 rx_crc 13 rx_frame
	 * 14 rx_fifo 15 rx_missed 16 tx_aborted 17 tx_carrier 18 tx_fifo
	 * 19 tx_heartbeat 20 tx_window 21 rx_compressed 22 tx_compressed */
	const uint64_t want[16] = {1002, 1000, 1004, 1006 + 1015, 1014, 1010 + 1011 + 1012 + 1013, 1021, 1008,
				   1003, 1001, 1005, 1007, 1018, 1009, 1017 + 1016 + 1020 + 1019, 1022};
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(v[i], want[i]);
	vms_nl_fields(s, 8 * 8, v); /* up to tx_dropped only */
	assert_int_equal(v[0], 1002);
	assert_int_equal(v[3], 1006);
	assert_int_equal(v[7], 0);
	assert_int_equal(v[15], 0);
}

VMS_TESTS(test_fields, test_host_interfaces, test_created_interfaces, test_come_and_go, test_no_allocation,
	  test_refused);

int main(void)
{
	/* each test leaves the namespace it entered, whatever failed */
	return vms_run_list(NULL, NULL, NULL, leave_ns);
}
