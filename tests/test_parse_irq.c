/* SPDX-License-Identifier: MIT */
/* /proc/interrupts and /proc/softirqs (parse_irq.c) on real files
 * (tests/fixtures/roots/{sysstat-root1-irq,procfs-irq}, provenance in
 * tests/fixtures/PROVENANCE.md) and on this host's own files:
 *   - sysstat's reading of root1: its tests/expected.mpstat-I, the rates
 *     since boot of `mpstat -P 0,3-5 -I CPU,SCPU` (count / 7192.55 s, the
 *     uptime of tests/root1/proc/uptime), quoted below, against ours;
 *   - prometheus/procfs's reading of its fixture (proc_interrupts_test.go
 *     TestProcInterrupts, softirqs_test.go TestSoftirqs);
 *   - every line of every file against an independent reader (strtok_r +
 *     strtoull), including /proc/interrupts and /proc/softirqs here;
 *   - malformed lines and headers refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "parse.h"

#define MAXCPU 64
#define MAXLINES 512

struct irqfile {
	uint32_t cpu[MAXCPU];
	unsigned ncpu, nlines;
	char name[MAXLINES][VMS_IRQ_NAME_MAX + 1];
	unsigned n[MAXLINES];
	uint64_t v[MAXLINES][MAXCPU];
};

/* Parse the whole buffer; every line must parse. */
static void parse_all(const char *buf, size_t len, struct irqfile *f)
{
	struct vms_cur c;
	struct vms_irq_line l;
	int r;
	memset(f, 0, sizeof(*f));
	vms_cur_init(&c, buf, len);
	assert_int_equal(vms_irq_header(&c, f->cpu, MAXCPU, &f->ncpu), 1);
	while ((r = vms_irq_next(&c, f->v[f->nlines], f->ncpu, &l)) != 0) {
		assert_int_equal(r, 1);
		assert_true(f->nlines < MAXLINES);
		memcpy(f->name[f->nlines], l.name, l.name_len);
		f->n[f->nlines++] = l.n;
	}
}

static int line_of(const struct irqfile *f, const char *name)
{
	for (unsigned i = 0; i < f->nlines; i++)
		if (strcmp(f->name[i], name) == 0)
			return (int)i;
	fail_msg("no line %s", name);
	return -1;
}

static int col_of(const struct irqfile *f, uint32_t cpu)
{
	for (unsigned i = 0; i < f->ncpu; i++)
		if (f->cpu[i] == cpu)
			return (int)i;
	fail_msg("no CPU%u", cpu);
	return -1;
}

/* The reference: strtok_r over blanks.  The header's tokens "CPUn"; each
 * line's first token "NAME:", then the tokens that strtoull reads whole,
 * at most one per CPU column. */
static void check_ref(const char *buf, size_t len, const struct irqfile *f)
{
	char *copy = strndup(buf, len), *save = NULL, *ln;
	unsigned line = 0;
	bool header = true;
	for (ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *s2 = NULL, *t = strtok_r(ln, " \t", &s2);
		if (!t)
			continue;
		if (header) {
			unsigned k = 0;
			for (; t; t = strtok_r(NULL, " \t", &s2), k++) {
				assert_true(strncmp(t, "CPU", 3) == 0);
				assert_int_equal(strtoul(t + 3, NULL, 10), f->cpu[k]);
			}
			assert_int_equal(k, f->ncpu);
			header = false;
			continue;
		}
		assert_true(line < f->nlines);
		size_t tl = strlen(t);
		assert_true(tl >= 2 && t[tl - 1] == ':');
		t[tl - 1] = '\0';
		assert_string_equal(t, f->name[line]);
		unsigned k = 0;
		while (k < f->ncpu && (t = strtok_r(NULL, " \t", &s2))) {
			char *end;
			unsigned long long v = strtoull(t, &end, 10);
			if (*end)
				break;
			assert_int_equal(v, f->v[line][k]);
			k++;
		}
		assert_int_equal(k, f->n[line]);
		line++;
	}
	assert_int_equal(line, f->nlines);
	free(copy);
}

static void check_fixture(const char *root, const char *file, struct irqfile *f)
{
	size_t len;
	char *buf = fixture_exact(root, file, &len); /* no NUL after it: ASan sees overreads */
	parse_all(buf, len, f);
	check_ref(buf, len, f);
	free(buf);
}

/* sysstat tests/expected.mpstat-I (c1eb661ab208): `mpstat -P 0,3-5 -N
 * all,1 -I CPU,SCPU,SUM` on tests/root1, the per-interrupt and per-softirq
 * rates since boot of CPUs 0, 3, 4 and 5. */
static const char mpstat_irq[] =
	"CPU        0/s        8/s        9/s       16/s       17/s       18/s       19/s       23/s       24/s       25/s       26/s       27/s       28/s       29/s       30/s       31/s       32/s       33/s       34/s       35/s       36/s      NMI/s      LOC/s      SPU/s      PMI/s      IWI/s      RTR/s      RES/s      CAL/s      TLB/s      TRM/s      THR/s      DFR/s      MCE/s      MCP/s      HYP/s      HRE/s      HVS/s      ERR/s      MIS/s      PIN/s      NPI/s      PIW/s\n"
	"  0       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.05    1537.52       0.00       0.05       0.00       0.00     196.97       4.45       4.81       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00\n"
	"  3       0.00       0.00       0.00       1.46       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       7.43       0.00       0.00       0.00       0.08    1272.09       0.00       0.08       0.00       0.00      20.72       4.20       4.56       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00\n"
	"  4       0.00       0.00       0.00       0.00       0.00       0.00      25.08      20.31       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.05    1801.74       0.00       0.05       0.00       0.00      76.09       3.78       5.69       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00\n"
	"  5       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.05    1521.36       0.00       0.05       0.00       0.00      11.89       4.37       5.37       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00       0.00\n";
static const char mpstat_soft[] =
	"CPU       HI/s    TIMER/s   NET_TX/s   NET_RX/s    BLOCK/s IRQ_POLL/s  TASKLET/s    SCHED/s  HRTIMER/s      RCU/s\n"
	"  0       0.00      23.23       0.00       0.00       0.03       0.00       0.00      20.56       0.00      13.26\n"
	"  3       0.00      26.19       0.10       7.31       0.00       0.00       0.02      11.78       0.04      14.94\n"
	"  4       4.97      26.34       0.00       0.00       0.47       0.00      15.81      12.00       0.00      14.05\n"
	"  5       0.00      26.25       0.01       0.00       0.23       0.00       0.00      12.53       0.00      14.52\n";

/* Every cell of an mpstat table equals our count / 7192.55 s printed with
 * two decimals (a line with fewer counts than CPUs, such as ERR, is 0 on
 * the other CPUs, as mpstat reads it).  Returns the cells compared. */
static unsigned check_mpstat(const struct irqfile *f, const char *table)
{
	char *copy = strdup(table), *save = NULL;
	char *head = strtok_r(copy, "\n", &save), *hs = NULL;
	char *names[64];
	unsigned nn = 0, cells = 0;
	for (char *t = strtok_r(head, " ", &hs); t; t = strtok_r(NULL, " ", &hs)) {
		if (strcmp(t, "CPU") == 0)
			continue;
		t[strlen(t) - 2] = '\0'; /* "/s" */
		names[nn++] = t;
	}
	for (char *ln = strtok_r(NULL, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *rs = NULL;
		uint32_t cpu = (uint32_t)strtoul(strtok_r(ln, " ", &rs), NULL, 10);
		int k = col_of(f, cpu);
		for (unsigned i = 0; i < nn; i++) {
			const char *want = strtok_r(NULL, " ", &rs);
			assert_non_null(want);
			int li = line_of(f, names[i]);
			uint64_t v = (unsigned)k < f->n[li] ? f->v[li][k] : 0;
			char got[32];
			snprintf(got, sizeof(got), "%.2f", (double)v / 7192.55);
			if (strcmp(got, want) != 0)
				fail_msg("CPU%u %s: %s/s from %llu, mpstat %s", cpu, names[i], got,
					 (unsigned long long)v, want);
			cells++;
		}
	}
	free(copy);
	return cells;
}

static struct irqfile F;

static void test_sysstat_root1(void **state)
{
	(void)state;
	check_fixture("sysstat-root1-irq", "interrupts", &F);
	assert_int_equal(F.ncpu, 9);
	assert_int_equal(F.cpu[8], 8);
	assert_int_equal(F.nlines, 43);
	/* ERR and MIS are not per CPU: one number */
	assert_int_equal(F.n[line_of(&F, "ERR")], 1);
	assert_int_equal(F.n[line_of(&F, "MIS")], 1);
	assert_int_equal(F.n[line_of(&F, "PIW")], 9);
	assert_int_equal(check_mpstat(&F, mpstat_irq), 4 * 43);

	check_fixture("sysstat-root1-irq", "softirqs", &F);
	assert_int_equal(F.ncpu, 9);
	assert_int_equal(F.nlines, 10);
	assert_int_equal(check_mpstat(&F, mpstat_soft), 4 * 10);
}

static void test_procfs(void **state)
{
	(void)state;
	check_fixture("procfs-irq", "interrupts", &F);
	/* TestProcInterrupts: 47 interrupts (an empty line between MIS and
	 * PIN is no interrupt) */
	assert_int_equal(F.nlines, 47);
	assert_int_equal(F.ncpu, 4);
	static const struct {
		const char *irq;
		unsigned n;
		uint64_t v[4];
	} want[] = {
		{"0", 4, {49, 0, 0, 0}},
		{"PIW", 4, {0, 0, 0, 0}},
		{"LOC", 4, {10196, 7429, 8542, 8229}},
		{"ERR", 1, {0}},
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(want); i++) {
		int l = line_of(&F, want[i].irq);
		assert_int_equal(F.n[l], want[i].n);
		for (unsigned k = 0; k < want[i].n; k++)
			assert_int_equal(F.v[l][k], want[i].v[k]);
	}

	check_fixture("procfs-irq", "softirqs", &F);
	/* TestSoftirqs (the header ends in blanks) */
	assert_int_equal(F.ncpu, 2);
	assert_int_equal(F.nlines, 10);
	static const struct {
		const char *name;
		unsigned cpu;
		uint64_t v;
	} sw[] = {
		{"HI", 0, 3},          {"TIMER", 1, 247490}, {"NET_TX", 0, 2419},
		{"NET_RX", 1, 28694},  {"BLOCK", 1, 262755}, {"IRQ_POLL", 0, 0},
		{"TASKLET", 0, 209},   {"SCHED", 0, 2278692}, {"HRTIMER", 0, 1281},
		{"RCU", 1, 532783},
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(sw); i++)
		assert_int_equal(F.v[line_of(&F, sw[i].name)][sw[i].cpu], sw[i].v);
}

/* This host's files, read once, against the reference reader. */
static void test_live(void **state)
{
	(void)state;
	static const char *const files[] = {"/proc/interrupts", "/proc/softirqs"};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(files); i++) {
		FILE *fp = fopen(files[i], "r");
		if (!fp) {
			vms_skip_note(NULL, "no /proc/interrupts or /proc/softirqs here");
			continue;
		}
		static char buf[1 << 20];
		size_t len = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
		assert_true(len < sizeof(buf));
		parse_all(buf, len, &F);
		check_ref(buf, len, &F);
		assert_true(F.nlines > 0);
	}
}

static void test_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ret;
	} hdr[] = {
		{"   CPU0  CPU1\n", 1},
		{"CPU0 CPU2 CPU5   \n", 1}, /* offline CPUs between */
		{"", -ENODATA},
		{"\n\n", -ENODATA},
		{"  0: 1 2\n", -EINVAL},          /* no header */
		{"CPU0 CPU0\n", -EINVAL},         /* not increasing */
		{"CPU1 CPU0\n", -EINVAL},
		{"CPU0 CPUx\n", -EINVAL},
		{"CPU0 CPU\n", -EINVAL},
		{"CPU0 CPU1x\n", -EINVAL},
		{"CPU0 CPU4294967296\n", -ERANGE},
		{"CPU0 CPU1 CPU2 CPU3 CPU4\n", -E2BIG}, /* more than cap (4) */
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(hdr); i++) {
		struct vms_cur c;
		uint32_t cpu[4];
		unsigned n;
		vms_cur_init(&c, hdr[i].text, strlen(hdr[i].text));
		int r = vms_irq_header(&c, cpu, 4, &n);
		if (r != hdr[i].ret)
			fail_msg("header case %u: %d, want %d", i, r, hdr[i].ret);
	}
	static const struct {
		const char *text;
		int ret;
		unsigned n;
	} lines[] = {
		{"  0:   8   0   IO-APIC   2-edge      timer\n", 1, 2},
		{"ERR:          0\n", 1, 1},
		{"LOC: 5 6", 1, 2},                    /* no newline at the end */
		{"  42: 1 2 3\n", 1, 2},               /* more numbers than CPUs: the rest is not ours */
		{"PIN: 1 2 Posted 9\n", 1, 2},
		{"X: 1 2-edge 3\n", 1, 1},             /* counts end at the description */
		{"NMI:\n", -EINVAL},                    /* no count */
		{"NMI: Non-maskable\n", -EINVAL},
		{"NMI 1 2\n", -EINVAL},                 /* no colon */
		{": 1 2\n", -EINVAL},                   /* no name */
		{"A-B: 1 2\n", -EINVAL},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG: 1 2\n", -EINVAL}, /* 33 bytes */
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF: 1 2\n", 1, 2},     /* 32 */
		{"LOC: 99999999999999999999 1\n", -ERANGE},
		{"LOC: 1 99999999999999999999\n", -ERANGE},
	};
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(lines); i++) {
		struct vms_cur c;
		struct vms_irq_line l;
		uint64_t v[2] = {0, 0};
		size_t len = strlen(lines[i].text);
		char *exact = malloc(len ? len : 1);
		memcpy(exact, lines[i].text, len);
		vms_cur_init(&c, exact, len);
		int r = vms_irq_next(&c, v, 2, &l);
		if (r != lines[i].ret)
			fail_msg("line case %u: %d, want %d", i, r, lines[i].ret);
		if (r == 1)
			assert_int_equal(l.n, lines[i].n);
		/* the cursor is past the line either way */
		assert_int_equal(vms_irq_next(&c, v, 2, &l), 0);
		free(exact);
	}
	/* blank lines are passed over */
	struct vms_cur c;
	struct vms_irq_line l;
	uint64_t v[2];
	const char *t = "\n   \nLOC: 1 2\n\n";
	vms_cur_init(&c, t, strlen(t));
	assert_int_equal(vms_irq_next(&c, v, 2, &l), 1);
	assert_int_equal(v[1], 2);
	assert_int_equal(vms_irq_next(&c, v, 2, &l), 0);
}

VMS_TEST_MAIN(NULL, NULL, test_sysstat_root1, test_procfs, test_live, test_malformed)
