/* SPDX-License-Identifier: MIT */
/* testutil.h - helpers shared by the unit tests. */
#ifndef VMS_TESTUTIL_H
#define VMS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/types.h>

/* Absolute path of a fixture file or directory under tests/fixtures
 * (from $VMS_FIXTURES). Returns a static buffer. */
const char *fixture_path(const char *rel);
/* Read a whole fixture file into a malloc'ed buffer; *len gets its size. */
char *fixture_read(const char *rel, size_t *len);
/* fixture_read of a path made by printf (asserted to exist). */
char *fixture_readf(size_t *len, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The file tests/fixtures/roots/<root>/<file>, NUL-terminated (as
 * fixture_read; asserted to exist). */
char *fixture_root_read(const char *root, const char *file, size_t *len);
/* The same as an exact-size heap
 * buffer (no NUL after it: ASan catches a parser reading past its end);
 * asserted to exist. */
char *fixture_exact(const char *root, const char *file, size_t *len);
/* The file tests/fixtures/roots/<root>/<file> with each line starting
 * with `prefix` ("": the first line) replaced by `with` (any number of
 * lines, each ending in a newline), or removed when `with` is NULL.
 * Not NUL-terminated; *len its size. */
char *fixture_edit(const char *root, const char *file, const char *prefix, const char *with, size_t *len);
/* The proc roots with a net/dev file (the parser's and the netdev
 * source's tests read every one of them). */
#define NET_FIXTURES_N 12
extern const char *const net_fixtures[NET_FIXTURES_N];
/* A fresh temporary directory (removed by the caller with rm_rf). */
char *tmpdir_make(void);
void rm_rf(const char *path);
/* rm_rf and free a directory from tmpdir_make. */
void tmpdir_free(char *dir);
/* Group (or test) fixtures: a fresh temporary directory in test_tmp,
 * removed by tmp_teardown. */
extern char *test_tmp;
int tmp_setup(void **state);
/* <test_tmp>/<name> (one of 16 static buffers, reused in turn). */
char *tp(const char *name);
int tmp_teardown(void **state);
/* A CSV table (dump's output): the first line names the columns, every
 * row has as many cells (asserted).  table_parse owns text (malloc'd). */
struct table {
	char *text;
	char **head;
	unsigned ncols;
	char **cells; /* rows x ncols */
	unsigned nrows;
};
void table_parse(struct table *t, char *text);
/* The index of column name, -1 without one. */
int table_col(const struct table *t, const char *name);
const char *table_cell(const struct table *t, unsigned row, int col);
/* The cell of column name in row, NULL without such a column. */
const char *table_get(const struct table *t, unsigned row, const char *name);
void table_free(struct table *t);

/* The highest CPU this process may run on. */
int test_last_cpu(void);
/* A child process that spins for ever, pinned to cpu (-1: where it is
 * allowed); the caller kills and reaps it. */
/* In a forked child: die with the test (a child left behind when an
 * assertion fails before the test kills it -- a stopped spinner, busy
 * threads -- would hold a CPU, or a BPF program, for good). */
void test_die_with_parent(void);
pid_t test_spin_on(int cpu);
/* The same, kept in a list: test_spin_kill_all() kills and reaps those
 * not reaped yet (a group teardown: a failed assertion leaves the test
 * with its loops running, and they hold its stdout). */
pid_t test_spin_kept(int cpu);
void test_spin_kill_all(void);
/* Field f of the thread's /proc/PID/task/PID/schedstat (1: run ns, 2:
 * run delay ns, 3: time slices). */
uint64_t test_thread_schedstat(pid_t pid, int f);

/* Write a file (creating parent directories). */
void write_file(const char *path, const char *data, size_t len);

/* A test that cannot run here (not root, no counting allocator under
 * ASan, no permission to mount): a real SKIP, never a pass.  It is noted,
 * and the binary exits 77 (meson's SKIP) if nothing failed; but when the
 * environment variable `require` is "1" (scripts/test.sh sets
 * VMS_REQUIRE_PERF, VMS_REQUIRE_ROOT and VMS_REQUIRE_NOALLOC where these
 * tests can run), it fails instead.  require NULL: the test does not apply
 * to this host (a skip that is no missing capability; exit status
 * unchanged). */
#define vms_skip(require, why)                                                                     \
	do {                                                                                       \
		vms_skip_note(require, why);                                                       \
		skip();                                                                            \
	} while (0)
/* The note alone, for a test that goes on without the part it cannot
 * check. */
void vms_skip_note(const char *require, const char *why);
/* cmocka_run_group_tests, with the skips' exit status: failures -> 1;
 * else skips for a missing capability -> 77; else 0.  A line on stderr
 * says how many tests there were, failed and could not run. */
int vms_run_group(const struct CMUnitTest *t, size_t n, CMFixtureFunction setup, CMFixtureFunction teardown);
#define vms_run_tests(tests, setup, teardown) \
	vms_run_group(tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

/* A binary's tests by name, without a cmocka_unit_test() line each:
 *   VMS_TESTS(test_a, test_b, ...);
 *   ... return vms_run_list(group_setup, group_teardown, setup, teardown);
 * (setup/teardown: each test's own fixture, or NULL), or all of main():
 *   VMS_TEST_MAIN(group_setup, group_teardown, test_a, test_b, ...) */
#define VMS_TESTS(...)                                                                             \
	static const CMUnitTestFunction vms_fns_[] = {__VA_ARGS__};                                \
	static const char vms_names_[] = #__VA_ARGS__
#define vms_run_list(gsetup, gteardown, setup, teardown)                                           \
	vms_run_named(vms_names_, vms_fns_, sizeof(vms_fns_) / sizeof(vms_fns_[0]), gsetup, gteardown, \
		      setup, teardown)
#define VMS_TEST_MAIN(gsetup, gteardown, ...)                                                      \
	VMS_TESTS(__VA_ARGS__);                                                                    \
	int main(void)                                                                             \
	{                                                                                          \
		return vms_run_list(gsetup, gteardown, NULL, NULL);                                \
	}
/* names: the functions' names, separated by commas (#__VA_ARGS__) */
int vms_run_named(const char *names, const CMUnitTestFunction *fns, size_t n, CMFixtureFunction gsetup,
		  CMFixtureFunction gteardown, CMFixtureFunction setup, CMFixtureFunction teardown);

#endif
