/* SPDX-License-Identifier: MIT */
/* floor.c - the cheapest sampler one could reasonably write: the baseline
 * vmsampler is measured against (bench/run.sh).
 *
 * Each tick: wake on an absolute timerfd deadline, pread the /proc files
 * (kept open) to their end, parse their numbers into an array (no names,
 * no validation, no schema), write one CSV line of the numbers.  No ring, no
 * frame, no timestamps beyond one clock_gettime.
 *
 *   floor [-a] [-p PHASE_NS] INTERVAL_NS COUNT OUTPUT
 *
 * Default (the fair floor): the same job as vmsampler's default
 * configuration, so that the two write the same values.  It reads
 * /proc/stat, /proc/diskstats, /proc/net/dev and /proc/loadavg, and keeps
 * the numbers vmsampler writes: every number of the cpu lines, the total
 * of intr and softirq (not the per-IRQ list), ctxt, processes,
 * procs_running, procs_blocked (not btime); the counters of whole disks
 * other than loop* and ram* (not major, minor, partitions); the counters
 * of every interface; the load averages (as two integers each: "0.63" is
 * 0 and 63) and the task counts (not the last pid); every number of
 * /proc/meminfo, the lines of /proc/vmstat that vmsampler's default
 * sources.vmstat.include selects (fnmatch on the key), and the totals of
 * /proc/pressure/{cpu,memory,io,irq} (those this kernel has; issue 14).
 * Digits inside names ("cpu1", "eth0", "vda", "pgscan_kswapd") are not
 * numbers.
 *
 * -a: the floor as first written for issue 2: /proc/stat, /proc/diskstats
 * and /proc/net/dev only, one pread each (so it sees only the first ~4 KiB
 * of /proc/net/dev: 31 interfaces), EVERY digit run of the three files is a number
 * and is written (on this machine ~800 values a line against vmsampler's
 * ~210: the 400-odd per-IRQ counts of the intr line, loop devices, major
 * and minor numbers, digits of names), so it formats about four times
 * what vmsampler formats.
 *
 * -p PHASE_NS: the first tick PHASE_NS after a wall-clock multiple of the
 * interval (vmsampler --align=INTERVAL starts at phase 0), so that run.sh
 * can run samplers side by side without their ticks coinciding. */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAXV 16384

#define NFILES 10
static char buf[NFILES][65536];
static uint64_t vals[MAXV];
static char line[1 << 18];

/* every digit run of [p, e) */
static size_t parse_all(const char *p, const char *e, uint64_t *out, size_t n)
{
	while (p < e) {
		if (*p >= '0' && *p <= '9') {
			uint64_t v = 0;
			while (p < e && *p >= '0' && *p <= '9')
				v = v * 10 + (uint64_t)(*p++ - '0');
			out[n++] = v;
			if (n == MAXV)
				return n;
		} else {
			p++;
		}
	}
	return n;
}

/* the first `max` digit runs of [p, e) */
static size_t parse_some(const char *p, const char *e, uint64_t *out, size_t n, unsigned max)
{
	while (p < e && max) {
		if (*p >= '0' && *p <= '9') {
			uint64_t v = 0;
			while (p < e && *p >= '0' && *p <= '9')
				v = v * 10 + (uint64_t)(*p++ - '0');
			out[n++] = v;
			max--;
			if (n == MAXV)
				return n;
		} else {
			p++;
		}
	}
	return n;
}

static const char *eol(const char *p, const char *e)
{
	const char *nl = memchr(p, '\n', (size_t)(e - p));
	return nl ? nl : e;
}

static const char *skip_token(const char *p, const char *e)
{
	while (p < e && *p == ' ')
		p++;
	while (p < e && *p != ' ')
		p++;
	return p;
}

static size_t parse_stat(const char *p, const char *e, uint64_t *out, size_t n)
{
	while (p < e && n < MAXV) {
		const char *l = eol(p, e);
		const char *q = skip_token(p, l);
		if (*p == 'i' || *p == 's') /* intr, softirq: the total */
			n = parse_some(q, l, out, n, 1);
		else if (*p != 'b') /* not btime */
			n = parse_all(q, l, out, n);
		p = l + 1;
	}
	return n;
}

static size_t parse_diskstats(const char *p, const char *e, uint64_t *out, size_t n)
{
	char disk[64] = "";
	size_t dlen = 0;
	while (p < e && n < MAXV) {
		const char *l = eol(p, e);
		const char *name = skip_token(skip_token(p, l), l);
		while (name < l && *name == ' ')
			name++;
		const char *q = name;
		while (q < l && *q != ' ')
			q++;
		size_t len = (size_t)(q - name);
		if (!(len >= 4 && memcmp(name, "loop", 4) == 0) && !(len >= 3 && memcmp(name, "ram", 3) == 0) &&
		    !(dlen && len > dlen && memcmp(name, disk, dlen) == 0)) { /* not a partition of it */
			if (len < sizeof(disk)) {
				memcpy(disk, name, len);
				dlen = len;
			}
			n = parse_all(q, l, out, n);
		}
		p = l + 1;
	}
	return n;
}

static size_t parse_netdev(const char *p, const char *e, uint64_t *out, size_t n)
{
	p = eol(p, e) + 1; /* the two header lines */
	p = p < e ? eol(p, e) + 1 : e;
	while (p < e && n < MAXV) {
		const char *l = eol(p, e);
		const char *colon = memrchr(p, ':', (size_t)(l - p));
		if (colon)
			n = parse_all(colon + 1, l, out, n);
		p = l + 1;
	}
	return n;
}

static size_t parse_loadavg(const char *p, const char *e, uint64_t *out, size_t n)
{
	return parse_some(p, e, out, n, 8); /* 0.63 1.13 1.88 2/345, not the last pid */
}

/* the numbers after `mark` on each line that has it */
static size_t parse_after(const char *p, const char *e, uint64_t *out, size_t n, const char *mark)
{
	size_t ml = strlen(mark);
	while (p < e && n < MAXV) {
		const char *l = eol(p, e);
		const char *m = memmem(p, (size_t)(l - p), mark, ml);
		if (m)
			n = parse_all(m + ml, l, out, n);
		p = l + 1;
	}
	return n;
}

static size_t parse_meminfo(const char *p, const char *e, uint64_t *out, size_t n)
{
	return parse_after(p, e, out, n, ":");
}

/* vmsampler's default sources.vmstat.include (src/sampler/config.c) */
static const char *const vmstat_default[] = {
	"pgpgin", "pgpgout", "pswpin", "pswpout", "pgfault", "pgmajfault", "pgfree",
	"pgscan_kswapd*", "pgscan_direct*", "pgscan_khugepaged", "pgscan_proactive", "pgsteal_kswapd*",
	"pgsteal_direct*", "pgsteal_khugepaged", "pgsteal_proactive", "pgsteal_anon", "pgsteal_file",
	"allocstall*", "compact_stall", "compact_fail", "compact_success", "oom_kill", "workingset_refault*",
	"thp_fault_alloc", "thp_fault_fallback",
};

static size_t parse_vmstat(const char *p, const char *e, uint64_t *out, size_t n)
{
	char key[64];
	while (p < e && n < MAXV) {
		const char *l = eol(p, e);
		const char *sp = memchr(p, ' ', (size_t)(l - p));
		if (sp && (size_t)(sp - p) < sizeof(key)) {
			memcpy(key, p, (size_t)(sp - p));
			key[sp - p] = '\0';
			for (size_t k = 0; k < sizeof(vmstat_default) / sizeof(*vmstat_default); k++)
				if (fnmatch(vmstat_default[k], key, 0) == 0) {
					n = parse_all(sp, l, out, n);
					break;
				}
		}
		p = l + 1;
	}
	return n;
}

static size_t parse_pressure(const char *p, const char *e, uint64_t *out, size_t n)
{
	return parse_after(p, e, out, n, "total=");
}

/* Read a whole /proc file.  A seq_file (/proc/net/dev, /proc/diskstats)
 * hands out at most one page-sized buffer of whole lines per read(), so a
 * read of 2048 bytes or more may have been cut there and the next one
 * goes on from that offset; a shorter read is the end (no line of these
 * files is anywhere near 2 KiB long).  Small files take one pread. */
static ssize_t read_file(int fd, char *b, size_t size)
{
	size_t len = 0;
	for (;;) {
		ssize_t r = pread(fd, b + len, size - len, (off_t)len);
		if (r < 0)
			return len ? (ssize_t)len : -1;
		len += (size_t)r;
		if (r < 2048 || len == size)
			return (ssize_t)len;
	}
}

static char *u64(char *p, uint64_t v)
{
	char t[24];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

int main(int argc, char **argv)
{
	int orig = 0;
	long long phase = -1;
	for (;;) {
		if (argc > 1 && strcmp(argv[1], "-a") == 0) {
			orig = 1;
			argc--;
			argv++;
		} else if (argc > 2 && strcmp(argv[1], "-p") == 0) {
			phase = strtoll(argv[2], NULL, 10);
			argc -= 2;
			argv += 2;
		} else {
			break;
		}
	}
	if (argc != 4) {
		fprintf(stderr, "usage: floor [-a] [-p PHASE_NS] INTERVAL_NS COUNT OUTPUT\n");
		return 2;
	}
	uint64_t period = strtoull(argv[1], NULL, 10);
	long count = strtol(argv[2], NULL, 10);
	int out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	const char *files[NFILES] = {"/proc/stat", "/proc/diskstats", "/proc/net/dev", "/proc/loadavg",
				     "/proc/meminfo", "/proc/vmstat", "/proc/pressure/cpu", "/proc/pressure/memory",
				     "/proc/pressure/io", "/proc/pressure/irq"};
	size_t (*parse[NFILES])(const char *, const char *, uint64_t *, size_t) = {
		parse_stat, parse_diskstats, parse_netdev, parse_loadavg, parse_meminfo, parse_vmstat,
		parse_pressure, parse_pressure, parse_pressure, parse_pressure};
	int nfiles = orig ? 3 : NFILES;
	int fd[NFILES];
	for (int i = 0; i < nfiles; i++) {
		fd[i] = open(files[i], O_RDONLY);
		if (fd[i] < 0 && i < 6) {
			perror(files[i]);
			return 1;
		}
		/* a kernel without PSI (or without its irq file): what vmsampler
		 * has no column for, the floor does not read */
	}
	if (out < 0) {
		perror(argv[3]);
		return 1;
	}
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t start = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	if (phase >= 0 && period > 0) {
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		uint64_t r = (uint64_t)rt.tv_sec * 1000000000ULL + (uint64_t)rt.tv_nsec;
		start += (period - r % period + (uint64_t)phase % period) % period;
	}
	for (long k = 0; k < count; k++) {
		uint64_t dl = start + (uint64_t)k * period;
		struct itimerspec its = {.it_value = {(time_t)(dl / 1000000000ULL), (long)(dl % 1000000000ULL)}};
		timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
		uint64_t exp;
		if (read(tfd, &exp, sizeof(exp)) < 0)
			return 1;
		clock_gettime(CLOCK_REALTIME, &now);
		size_t n = 0;
		vals[n++] = (uint64_t)now.tv_sec;
		for (int i = 0; i < nfiles; i++) {
			if (fd[i] < 0)
				continue;
			ssize_t r = orig ? pread(fd[i], buf[i], sizeof(buf[i]), 0)
					 : read_file(fd[i], buf[i], sizeof(buf[i]));
			if (r > 0)
				n = orig ? parse_all(buf[i], buf[i] + r, vals, n)
					 : parse[i](buf[i], buf[i] + r, vals, n);
		}
		char *p = line;
		for (size_t i = 0; i < n; i++) {
			p = u64(p, vals[i]);
			*p++ = i + 1 < n ? ',' : '\n';
		}
		if (write(out, line, (size_t)(p - line)) < 0)
			return 1;
	}
	close(out);
	return 0;
}
