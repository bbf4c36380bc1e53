/* SPDX-License-Identifier: MIT */
/* naive.c - the approach vmsampler's per-VM design replaces, for the
 * benchmark: one virConnectGetAllDomainStats call (all groups, as
 * `virsh domstats` makes it) at every 1 s deadline, on one open
 * read-only connection, single-threaded.
 *
 *   naive [-c URI] [-i MS] -t SECONDS
 *   naive [-c URI] -d DOMAIN -n CALLS
 *
 * The second form measures what the vm source's agent asks for one
 * domain in its slow path: virDomainListGetStats of the balloon and block
 * groups with NOWAIT, CALLS times 50 ms apart (bench.py reads the
 * domain's cgroup and libvirtd's CPU around it).
 *
 * Prints one line of JSON: calls, deadlines missed (a call that overran
 * the next deadline), and the distribution of the call's wall time and of
 * its lateness (when the values were in hand, minus the deadline), plus
 * its own CPU time.
 *
 * Build: gcc -O2 -o naive naive.c $(pkg-config --cflags --libs libvirt) */
#define _GNU_SOURCE
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i];
}

static void quiet(void *u, virErrorPtr e)
{
	(void)u;
	(void)e;
}

int main(int argc, char **argv)
{
	const char *uri = "qemu:///system", *dom = NULL;
	uint64_t interval = 1000000000ull, secs = 60, calls = 0;
	int o;
	while ((o = getopt(argc, argv, "c:i:t:d:n:")) != -1) {
		switch (o) {
		case 'c': uri = optarg; break;
		case 'd': dom = optarg; break;
		case 'n': calls = strtoull(optarg, NULL, 10); break;
		case 'i': interval = strtoull(optarg, NULL, 10) * 1000000ull; break;
		case 't': secs = strtoull(optarg, NULL, 10); break;
		default: fprintf(stderr, "usage: naive [-c URI] [-i MS] -t SECONDS\n"); return 2;
		}
	}
	virSetErrorFunc(NULL, quiet);
	virConnectPtr c = virConnectOpenReadOnly(uri);
	if (!c) {
		fprintf(stderr, "naive: cannot connect to %s\n", uri);
		return 1;
	}
	if (dom) {
		virDomainPtr d = virDomainLookupByName(c, dom);
		if (!d) {
			fprintf(stderr, "naive: no domain %s\n", dom);
			return 1;
		}
		virDomainPtr list[2] = {d, NULL};
		uint64_t *w = calloc(calls + 1, sizeof(*w));
		size_t ok = 0;
		for (uint64_t i = 0; i < calls; i++) {
			virDomainStatsRecordPtr *recs = NULL;
			uint64_t t0 = now();
			int k = virDomainListGetStats(list, VIR_DOMAIN_STATS_BALLOON | VIR_DOMAIN_STATS_BLOCK, &recs,
						      VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT);
			w[i] = now() - t0;
			ok += k == 1;
			virDomainStatsRecordListFree(recs);
			usleep(50000);
		}
		qsort(w, calls, sizeof(*w), cmp);
		printf("{\"calls\": %llu, \"ok\": %zu, \"wall_p50_ns\": %llu, \"wall_p99_ns\": %llu}\n",
		       (unsigned long long)calls, ok, (unsigned long long)pct(w, calls, 0.5),
		       (unsigned long long)pct(w, calls, 0.99));
		free(w);
		virDomainFree(d);
		virConnectClose(c);
		return 0;
	}
	size_t cap = (size_t)(secs * 1000000000ull / interval) + 2, n = 0, missed = 0, domains = 0;
	uint64_t *wall = calloc(cap, sizeof(*wall)), *late = calloc(cap, sizeof(*late));
	uint64_t start = now() + interval, end = start + secs * 1000000000ull, dl = start;
	while (dl < end && n < cap) {
		struct timespec ts = {(time_t)(dl / 1000000000ull), (long)(dl % 1000000000ull)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		uint64_t t0 = now();
		virDomainStatsRecordPtr *recs = NULL;
		int k = virConnectGetAllDomainStats(c, 0, &recs, 0);
		uint64_t t1 = now();
		if (k >= 0) {
			domains = (size_t)k;
			virDomainStatsRecordListFree(recs);
		}
		wall[n] = t1 - t0;
		late[n] = t1 - dl;
		n++;
		dl += interval;
		while (dl < t1) { /* the call overran: those deadlines are gone */
			dl += interval;
			missed++;
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	uint64_t cpu = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000ull +
		       (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
	qsort(wall, n, sizeof(*wall), cmp);
	qsort(late, n, sizeof(*late), cmp);
	printf("{\"calls\": %zu, \"domains\": %zu, \"missed\": %zu, \"wall_p50_ns\": %llu, \"wall_p99_ns\": %llu, "
	       "\"wall_max_ns\": %llu, \"late_p50_ns\": %llu, \"late_p99_ns\": %llu, \"late_max_ns\": %llu, "
	       "\"cpu_ns\": %llu}\n",
	       n, domains, missed, (unsigned long long)pct(wall, n, 0.5), (unsigned long long)pct(wall, n, 0.99),
	       (unsigned long long)(n ? wall[n - 1] : 0), (unsigned long long)pct(late, n, 0.5),
	       (unsigned long long)pct(late, n, 0.99), (unsigned long long)(n ? late[n - 1] : 0),
	       (unsigned long long)cpu);
	virConnectClose(c);
	free(wall);
	free(late);
	return 0;
}
