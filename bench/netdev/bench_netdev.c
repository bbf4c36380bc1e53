/* SPDX-License-Identifier: MIT */
/* bench_netdev.c - CPU cost of one read of the netdev source with each
 * backend, rtnetlink RTM_GETSTATS against /proc/net/dev (issue 15; not a
 * test).
 *
 *   bench_netdev [-n TICKS] [-r ROUNDS] [SIZE...]   (root; default sizes 4 65 130)
 *   (built in build/bench/netdev/; see bench/netdev/README.md)
 *
 * For each SIZE, a network namespace of its own (unshare) holding lo, up,
 * and SIZE-1 more interfaces made with ip(8): veth pairs, all up, and one
 * ifb when SIZE-1 is odd (this kernel has no dummy driver).  There the
 * source is opened and declared twice as the loop does, with backend
 * netlink and backend procfs, and the two declarations must have the same
 * columns.  ROUNDS rounds (default 21), each TICKS sample() calls (default
 * 2000) of one backend then TICKS of the other, the order alternating,
 * back to back on one CPU; per round the CPU time per read
 * (CLOCK_THREAD_CPUTIME_ID: user and system) of each and their ratio;
 * printed: the medians.  The namespace goes away with its interfaces when
 * the next is made or the program ends.  Allocations in the reads are
 * counted (malloc interposed) and must be 0. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloccount.h"
#include "benchstat.h"
#include "config.h"
#include "netdev_nl.h"
#include "schema.h"
#include "source.h"

extern const struct vms_source_ops vms_source_netdev;


struct src {
	struct vms_source s;
	struct vms_source_conf sc;
	struct vms_schema *schema;
	uint64_t slots[16 * 4096];
};

/* these sources read no clock, queue no events and see no VM set */
static const struct vms_source_env no_env = {0};

static int src_open(struct src *x, int backend, int dirfd)
{
	memset(x, 0, sizeof(*x));
	x->sc.enabled = true;
	x->sc.every = 1;
	x->sc.backend = backend;
	x->s.ops = &vms_source_netdev;
	x->s.sconf = &x->sc;
	x->s.proc_dirfd = dirfd;
	x->s.priv = calloc(1, vms_source_netdev.priv_size);
	if (!x->s.priv || vms_source_netdev.open(&x->s, &no_env) < 0)
		return -1;
	struct vms_schema_builder b;
	vms_schema_builder_init(&b);
	vms_schema_builder_source(&b, 0);
	int r = vms_source_netdev.declare(&x->s, &b, &no_env);
	x->s.ncols = vms_schema_builder_count(&b);
	if (r == 0 && x->s.ncols <= VMS_ARRAY_SIZE(x->slots))
		r = vms_schema_finish(&b, 1, 0, &x->schema);
	vms_schema_builder_free(&b);
	return r < 0 || !x->schema ? -1 : 0;
}

static void src_close(struct src *x)
{
	vms_source_netdev.close(&x->s);
	free(x->s.priv);
	vms_schema_unref(x->schema);
}

/* A namespace with lo and n-1 more interfaces. */
static int make_ns(unsigned n)
{
	if (unshare(CLONE_NEWNET) != 0) {
		perror("unshare(CLONE_NEWNET) (root?)");
		return -1;
	}
	char cmd[256];
	int r = system("ip link set lo up");
	for (unsigned i = 0; r == 0 && i < (n - 1) / 2; i++) {
		snprintf(cmd, sizeof(cmd),
			 "ip link add bnd%ua type veth peer name bnd%ub && ip link set bnd%ua up && "
			 "ip link set bnd%ub up", i, i, i, i);
		r = system(cmd);
	}
	if (r == 0 && (n - 1) % 2)
		r = system("ip link add bndifb type ifb && ip link set bndifb up");
	return r == 0 ? 0 : -1;
}

static struct src both[2]; /* 0 netlink, 1 procfs */
static uint64_t tick_idx = 1;

static int reads(struct src *x, unsigned n)
{
	struct vms_tick_ctx t = {.idx = 0};
	for (unsigned i = 0; i < n; i++) {
		t.idx = ++tick_idx; /* a new tick each read: the file is read again */
		if (vms_source_netdev.sample(&x->s, x->slots, &t) != 0)
			return -1;
	}
	return 0;
}

static int one_size(unsigned n, unsigned ticks, unsigned rounds)
{
	if (make_ns(n) < 0)
		return -1;
	int dirfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || src_open(&both[0], VMS_NETDEV_NETLINK, dirfd) < 0 ||
	    src_open(&both[1], VMS_NETDEV_PROCFS, dirfd) < 0 || !vms_netdev_netlink(&both[0].s) ||
	    vms_netdev_netlink(&both[1].s)) {
		fprintf(stderr, "%u interfaces: the sources cannot be opened\n", n);
		return -1;
	}
	if (!vms_schema_same_columns(both[0].schema, both[1].schema) || both[0].s.ncols != n * 16) {
		fprintf(stderr, "%u interfaces: the backends declare different columns (%u, %u)\n", n,
			both[0].s.ncols, both[1].s.ncols);
		return -1;
	}
	double *t[2], *ratio = calloc(rounds, sizeof(double));
	t[0] = calloc(rounds, sizeof(double));
	t[1] = calloc(rounds, sizeof(double));
	if (!ratio || !t[0] || !t[1])
		return -1;
	unsigned long tick_allocs = 0;
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned k = 0; k < 2; k++) {
			unsigned b = (r + k) % 2; /* alternate which goes first */
			uint64_t a = bench_cpu_ns();
			allocs = 0;
			armed = 1;
			int e = reads(&both[b], ticks);
			armed = 0;
			tick_allocs += allocs;
			if (e < 0) {
				fprintf(stderr, "%u interfaces: a read of the %s backend failed\n", n,
					b ? "procfs" : "netlink");
				return -1;
			}
			t[b][r] = (double)(bench_cpu_ns() - a) / ticks;
		}
		ratio[r] = t[1][r] / t[0][r];
	}
	double nl = bench_median(t[0], rounds) / 1000, fs = bench_median(t[1], rounds) / 1000;
	printf("| %u | %.2f | %.3f | %.2f | %.3f | %.2f | %lu |\n", n, nl, nl / n, fs, fs / n,
	       bench_median(ratio, rounds), tick_allocs);
	fflush(stdout);
	src_close(&both[0]);
	src_close(&both[1]);
	close(dirfd);
	free(t[0]);
	free(t[1]);
	free(ratio);
	return tick_allocs ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned ticks = 2000, rounds = 21;
	int o;
	while ((o = getopt(argc, argv, "n:r:")) != -1) {
		if (o == 'n')
			ticks = (unsigned)atoi(optarg);
		else if (o == 'r')
			rounds = (unsigned)atoi(optarg);
		else
			return 2;
	}
	static const unsigned dflt[] = {4, 65, 130};
	unsigned nsize = optind < argc ? (unsigned)(argc - optind) : 3;
	if (!ticks || !rounds)
		return 2;
	printf("%u rounds of %u reads per backend, CPU time per read (user+system), medians\n\n", rounds, ticks);
	printf("| interfaces | netlink µs/read | µs/interface | /proc/net/dev µs/read | µs/interface | "
	       "procfs/netlink | allocations |\n|---|---|---|---|---|---|---|\n");
	for (unsigned i = 0; i < nsize; i++) {
		unsigned n = optind < argc ? (unsigned)atoi(argv[optind + (int)i]) : dflt[i];
		if (n < 1 || n > 4000 || one_size(n, ticks, rounds) < 0)
			return 1;
	}
	return 0;
}
