/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

const char *fixture_path(const char *rel)
{
	static char buf[PATH_MAX];
	const char *base = getenv("VMS_FIXTURES");
	if (!base)
		base = "tests/fixtures";
	snprintf(buf, sizeof(buf), "%s/%s", base, rel);
	return buf;
}

char *fixture_read(const char *rel, size_t *len)
{
	const char *p = fixture_path(rel);
	FILE *f = fopen(p, "rb");
	if (!f) {
		fprintf(stderr, "cannot open fixture %s: %s\n", p, strerror(errno));
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

char *fixture_readf(size_t *len, const char *fmt, ...)
{
	char rel[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	char *b = fixture_read(rel, len);
	assert_non_null(b);
	return b;
}

char *fixture_root_read(const char *root, const char *file, size_t *len)
{
	return fixture_readf(len, "roots/%s/%s", root, file);
}

char *fixture_exact(const char *root, const char *file, size_t *len)
{
	char *tmp = fixture_root_read(root, file, len);
	char *buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	memcpy(buf, tmp, *len);
	free(tmp);
	return buf;
}

char *fixture_edit(const char *root, const char *file, const char *prefix, const char *with, size_t *len)
{
	size_t n;
	char *b = fixture_root_read(root, file, &n);
	size_t wl = with ? strlen(with) : 0, nl_count = 1;
	for (size_t i = 0; i < n; i++)
		nl_count += b[i] == '\n';
	char *out = malloc(n + nl_count * wl + 1);
	assert_non_null(out);
	size_t o = 0;
	bool first = true;
	for (char *ln = b; ln < b + n; first = false) {
		char *nl = memchr(ln, '\n', (size_t)(b + n - ln));
		size_t l = nl ? (size_t)(nl - ln) + 1 : (size_t)(b + n - ln);
		if (*prefix ? strncmp(ln, prefix, strlen(prefix)) == 0 : first) {
			memcpy(out + o, with ? with : "", wl);
			o += wl;
		} else {
			memcpy(out + o, ln, l);
			o += l;
		}
		ln += l;
	}
	free(b);
	*len = o;
	return out;
}

const char *const net_fixtures[NET_FIXTURES_N] = {
	"atlas-ec2-lo-over-2e37-t0",
	"atlas-ec2-t1-errors",
	"goprocinfo-pid3323-tunnels",
	"goprocinfo-squeeze-glued",
	"jtsys-em1-em2-nonl",
	"node_exporter-issue73-glued",
	"node_exporter-odd-names",
	"pcp-bigsys-hpbl920-49if",
	"procfs-docker-veth",
	"procfs-pid26231-netns",
	"sysstat-root1-virbr",
	"zte-modem-26if-drop-near-2e32",
};

char *tmpdir_make(void)
{
	char *t = strdup("/tmp/vmstest.XXXXXX");
	if (!t || !mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tmpdir_free(char *dir)
{
	rm_rf(dir);
	free(dir);
}

char *test_tmp;

int tmp_setup(void **state)
{
	(void)state;
	test_tmp = tmpdir_make();
	return test_tmp ? 0 : -1;
}

char *tp(const char *name)
{
	static char buf[16][PATH_MAX];
	static int k;
	k = (k + 1) % 16;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", test_tmp, name);
	return buf[k];
}

int tmp_teardown(void **state)
{
	(void)state;
	tmpdir_free(test_tmp);
	test_tmp = NULL;
	return 0;
}

static void mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
}

void write_file(const char *path, const char *data, size_t len)
{
	mkdirs(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* ---- skips (testutil.h) ---------------------------------------------------- */

static unsigned capability_skips;

void vms_skip_note(const char *require, const char *why)
{
	if (!require) {
		fprintf(stderr, "SKIP (does not apply here): %s\n", why);
		return;
	}
	const char *v = getenv(require);
	if (v && strcmp(v, "1") == 0)
		fail_msg("%s, and %s=1 requires this test to run", why, require);
	fprintf(stderr, "SKIP (%s=1 would make it a failure): %s\n", require, why);
	capability_skips++;
}

int vms_run_group(const struct CMUnitTest *t, size_t n, CMFixtureFunction setup, CMFixtureFunction teardown)
{
	int failed = _cmocka_run_group_tests("tests", t, n, setup, teardown);
	/* what ran, so that a SKIP does not hide what passed */
	fprintf(stderr, "%s: %zu tests, %d failed, %u skipped for want of a capability%s\n",
		program_invocation_short_name, n, failed, capability_skips,
		failed ? "" : capability_skips ? ": exit 77 (SKIP); the others passed" : "");
	if (failed)
		return 1; /* not the count: 77 failures would read as a SKIP */
	return capability_skips ? 77 : 0;
}

int vms_run_named(const char *names, const CMUnitTestFunction *fns, size_t n, CMFixtureFunction gsetup,
		  CMFixtureFunction gteardown, CMFixtureFunction setup, CMFixtureFunction teardown)
{
	char *copy = strdup(names), *save = NULL;
	struct CMUnitTest *t = calloc(n, sizeof(*t));
	assert_true(copy && t);
	size_t i = 0;
	for (char *w = strtok_r(copy, ", \t\n", &save); w; w = strtok_r(NULL, ", \t\n", &save)) {
		assert_true(i < n);
		t[i] = (struct CMUnitTest){.name = w, .test_func = fns[i], .setup_func = setup, .teardown_func = teardown};
		i++;
	}
	assert_true(i == n);
	int rc = vms_run_group(t, n, gsetup, gteardown);
	free(t);
	free(copy);
	return rc;
}

static unsigned table_split(char *line, char **out, unsigned max)
{
	unsigned n = 0;
	for (char *p = line;; p++) {
		if (n < max)
			out[n] = p;
		n++;
		p = strchr(p, ',');
		if (!p)
			break;
		*p = '\0';
	}
	return n;
}

void table_parse(struct table *t, char *text)
{
	enum { MAXCOLS = 16384 };
	memset(t, 0, sizeof(*t));
	t->text = text;
	assert_non_null(text);
	char *save = NULL;
	unsigned cap = 0;
	for (char *line = strtok_r(t->text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
		if (!t->head) {
			t->head = calloc(MAXCOLS, sizeof(char *));
			t->ncols = table_split(line, t->head, MAXCOLS);
			assert_true(t->ncols < MAXCOLS);
			continue;
		}
		if (t->nrows == cap) {
			cap = cap ? cap * 2 : 64;
			t->cells = realloc(t->cells, (size_t)cap * t->ncols * sizeof(char *));
		}
		unsigned n = table_split(line, t->cells + (size_t)t->nrows * t->ncols, t->ncols);
		assert_int_equal(n, t->ncols); /* rectangular */
		t->nrows++;
	}
	assert_non_null(t->head);
}

int table_col(const struct table *t, const char *name)
{
	for (unsigned i = 0; i < t->ncols; i++)
		if (strcmp(t->head[i], name) == 0)
			return (int)i;
	return -1;
}

const char *table_cell(const struct table *t, unsigned row, int col)
{
	assert_true(row < t->nrows && col >= 0 && (unsigned)col < t->ncols);
	return t->cells[(size_t)row * t->ncols + (unsigned)col];
}

const char *table_get(const struct table *t, unsigned row, const char *name)
{
	assert_true(row < t->nrows);
	int i = table_col(t, name);
	return i < 0 ? NULL : table_cell(t, row, i);
}

void table_free(struct table *t)
{
	free(t->text);
	free(t->head);
	free(t->cells);
}

/* CPU masks as sched_{get,set}affinity(2) take them, without <sched.h>
 * (src/sampler/sched.h shadows it on the tests' include path) */
#define MASK_WORDS 16
#define WORD_BITS (8 * (int)sizeof(unsigned long))

int test_last_cpu(void)
{
	unsigned long mask[MASK_WORDS] = {0};
	long r = syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
	assert_true(r > 0);
	int cpu = -1;
	for (int c = 0; c < (int)(8 * (size_t)r); c++)
		if (mask[c / WORD_BITS] >> (c % WORD_BITS) & 1)
			cpu = c;
	assert_true(cpu >= 0);
	return cpu;
}

void test_die_with_parent(void)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
		_exit(1);
}

pid_t test_spin_on(int cpu)
{
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		/* dies with the test: a spinner left behind (the test killed
		 * by a timeout while it was stopped) would hold what the test
		 * had open -- a BPF program attached host-wide -- for good */
		test_die_with_parent();
		if (cpu >= 0) {
			unsigned long one[MASK_WORDS] = {0};
			one[cpu / WORD_BITS] = 1ul << (cpu % WORD_BITS);
			if (syscall(SYS_sched_setaffinity, 0, sizeof(one), one) != 0)
				_exit(1);
		}
		for (;;)
			; /* runs, or waits to run, on its CPU */
	}
	return p;
}

static pid_t spun[16];
static unsigned nspun;

pid_t test_spin_kept(int cpu)
{
	pid_t p = test_spin_on(cpu);
	if (nspun < sizeof(spun) / sizeof(spun[0]))
		spun[nspun++] = p;
	return p;
}

void test_spin_kill_all(void)
{
	for (unsigned i = 0; i < nspun; i++)
		if (waitpid(spun[i], NULL, WNOHANG) == 0) { /* our child, not reaped yet */
			kill(spun[i], SIGKILL);
			waitpid(spun[i], NULL, 0);
		}
	nspun = 0;
}

uint64_t test_thread_schedstat(pid_t pid, int f)
{
	char p[64];
	unsigned long long v[3];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
	FILE *fp = fopen(p, "r");
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%llu %llu %llu", &v[0], &v[1], &v[2]), 3);
	fclose(fp);
	return v[f - 1];
}
