/* SPDX-License-Identifier: MIT */
/* test_cli.c - the command line: vms_cli_parse, and the real binary
 * ($VMS_BIN) for exit codes, stdout/stderr and signals. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "log.h"
#include "runbin.h"
#include "sink.h"
#include "testutil.h"
#include "vms_build.h"

#define MAXARGS 24

/* vms_cli_parse over a NULL-terminated list (argv[0] added). */
static int parse(struct vms_cli *cli, const char *const *args, char *err, size_t errlen)
{
	static char *argv[MAXARGS + 2];
	int argc = 0;
	argv[argc++] = "vmsampler";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	return vms_cli_parse(cli, argc, argv, err, errlen);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

struct usage_case {
	const char *args[6];
	const char *msg;
};

static const struct usage_case usage_cases[] = {
	{{"-i"}, "option '-i' needs an argument"},
	{{"--interval"}, "option '--interval' needs an argument"},
	{{"-n", "1", "--output"}, "option '--output' needs an argument"},
	{{"--foo"}, "unknown option '--foo'"},
	{{"--foo=3"}, "unknown option '--foo'"},
	{{"-x"}, "unknown option '-x'"},
	{{"-qx"}, "unknown option '-x'"},
	{{"--c", "x"}, "ambiguous option '--c' (could be --count --control --csv-layout --compress --config)"},
	{{"--help=1"}, "option '--help' does not take an argument"},
	{{"--print-config=yes"}, "option '--print-config' does not take an argument"},
	{{"foo"}, "unexpected argument 'foo'"},
	{{"-n", "2", "foo", "bar"}, "unexpected argument 'foo'"},
	{{"--", "-i"}, "unexpected argument '-i'"},
	{{"-v", "dump"}, "'dump' must be the first argument: vmsampler dump FILE.vms"},
	{{"-c", "a", "-c", "b"}, "option '--config' given twice"},
	{{"-i", "5ms"}, "--interval: '5ms' is out of range (10ms to 24h)"},
	{{"-i", "25h"}, "--interval: '25h' is out of range (10ms to 24h)"},
	{{"-i", "abc"}, "--interval: 'abc' is not a duration (such as 500ms, 1s, 5m)"},
	{{"--interval=1s2"}, "--interval: '1s2' is not a duration (such as 500ms, 1s, 5m)"},
	{{"-n", "abc"}, "--count: 'abc' is not a non-negative integer"},
	{{"-n", "-1"}, "--count: '-1' is not a non-negative integer"},
	{{"-n", "10 "}, "--count: '10 ' is not a non-negative integer"},
	{{"-n", "1e3"}, "--count: '1e3' is not a non-negative integer"},
	{{"-n", ""}, "--count: missing value"},
	{{"-n", "18446744073709551616"}, "--count: '18446744073709551616' is out of range (0 to 18446744073709551615)"},
	{{"-f", "xml"}, "--format: 'xml' is not one of auto, csv, bin"},
	{{"--csv-layout=tall"}, "--csv-layout: 'tall' is not one of wide, long"},
	{{"--ring-slots", "100"}, "--ring-slots: '100' is not a power of two from 2 to 1048576"},
	{{"--ring-slots", "0x40"}, "--ring-slots: '0x40' is not a non-negative integer"},
	{{"--align", "1h1m"}, "--align: '1h1m' is not a duration (such as 500ms, 1s, 5m)"},
	{{"--align", "25h"}, "--align: '25h' is out of range (0, or 1ms to 24h)"},
	{{"-o", ""}, "--output: must not be empty"},
	{{"--proc-root="}, "--proc-root: must not be empty"},
};

static void test_parse_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(usage_cases); i++) {
		struct vms_cli cli;
		char err[256];
		int r = parse(&cli, usage_cases[i].args, err, sizeof(err));
		if (r != -EINVAL || strcmp(err, usage_cases[i].msg) != 0)
			fail_msg("case %zu (%s ...): got %d '%s', expected '%s'", i, usage_cases[i].args[0], r, err,
				 usage_cases[i].msg);
	}
}

static const char *set_value(const struct vms_cli *cli, const char *key)
{
	for (unsigned i = 0; i < cli->nset; i++)
		if (strcmp(cli->set[i].key, key) == 0)
			return cli->set[i].value;
	return NULL;
}

static void test_parse_ok(void **state)
{
	(void)state;
	struct vms_cli cli;
	char err[256];

	assert_int_equal(parse(&cli, (const char *const[]){NULL}, err, sizeof(err)), 0);
	assert_int_equal(cli.action, VMS_CLI_RUN);
	assert_int_equal(cli.nset, 0);
	assert_null(cli.config_path);

	assert_int_equal(parse(&cli,
			       ARGS("-i", "1s", "--count=5", "--align", "1m", "--proc-root", "/p", "--ring-slots=8",
				    "-o", "x.csv", "-f", "csv", "--csv-layout", "long", "-c", "f.yaml",
				    "--ring", "/dev/shm/r"),
			       err, sizeof(err)),
			 0);
	assert_int_equal(cli.nset, 9);
	assert_string_equal(set_value(&cli, "ring_path"), "/dev/shm/r");
	assert_string_equal(set_value(&cli, "interval"), "1s");
	assert_string_equal(set_value(&cli, "count"), "5");
	assert_string_equal(set_value(&cli, "align"), "1m");
	assert_string_equal(set_value(&cli, "proc_root"), "/p");
	assert_string_equal(set_value(&cli, "ring_slots"), "8");
	assert_string_equal(set_value(&cli, "output"), "x.csv");
	assert_string_equal(set_value(&cli, "format"), "csv");
	assert_string_equal(set_value(&cli, "csv_layout"), "long");
	assert_string_equal(cli.config_path, "f.yaml");

	/* the last of a repeated option wins; -q and -v set the same key */
	assert_int_equal(parse(&cli, ARGS("-i", "1s", "-q", "-i", "2s", "-v"), err, sizeof(err)), 0);
	assert_int_equal(cli.nset, 2);
	assert_string_equal(set_value(&cli, "interval"), "2s");
	assert_string_equal(set_value(&cli, "log_level"), "debug");
	assert_int_equal(parse(&cli, ARGS("-vq"), err, sizeof(err)), 0);
	assert_string_equal(set_value(&cli, "log_level"), "error");

	/* a unique prefix of a long option */
	assert_int_equal(parse(&cli, ARGS("--inter=250ms", "--cou", "3"), err, sizeof(err)), 0);
	assert_string_equal(set_value(&cli, "interval"), "250ms");
	assert_string_equal(set_value(&cli, "count"), "3");
	/* "-o -" is stdout, not an option */
	assert_int_equal(parse(&cli, ARGS("-o", "-"), err, sizeof(err)), 0);
	assert_string_equal(set_value(&cli, "output"), "-");

	/* actions: help beats version beats print-config, in any order */
	assert_int_equal(parse(&cli, ARGS("-V", "-h"), err, sizeof(err)), 0);
	assert_int_equal(cli.action, VMS_CLI_HELP);
	assert_int_equal(parse(&cli, ARGS("--print-config", "-V"), err, sizeof(err)), 0);
	assert_int_equal(cli.action, VMS_CLI_VERSION);
	assert_int_equal(parse(&cli, ARGS("--print-config"), err, sizeof(err)), 0);
	assert_int_equal(cli.action, VMS_CLI_PRINT_CONFIG);
}

/* ---- the real binary ----------------------------------------------------- */

static void expect_usage_error(const char *const *args, const char *msg)
{
	struct run_result r;
	char want[512];
	run_bin(&r, 0, args);
	snprintf(want, sizeof(want), "vmsampler: %s. Try 'vmsampler --help'.\n", msg);
	if (r.status != 2 || strcmp(r.err, want) != 0 || r.out[0])
		fail_msg("%s ...: status %d, stderr '%s', stdout '%s'; expected 2 and '%s'", args[0], r.status,
			 r.err, r.out, want);
	assert_int_equal(count_lines(r.err), 1);
	run_result_free(&r);
}

static void test_bin_usage_errors(void **state)
{
	(void)state;
	expect_usage_error(ARGS("-i", "abc"), "--interval: 'abc' is not a duration (such as 500ms, 1s, 5m)");
	expect_usage_error(ARGS("-i", "9ms"), "--interval: '9ms' is out of range (10ms to 24h)");
	expect_usage_error(ARGS("--bogus"), "unknown option '--bogus'");
	expect_usage_error(ARGS("-Z"), "unknown option '-Z'");
	expect_usage_error(ARGS("-n", "abc"), "--count: 'abc' is not a non-negative integer");
	expect_usage_error(ARGS("-f", "xml"), "--format: 'xml' is not one of auto, csv, bin");
	expect_usage_error(ARGS("-i"), "option '-i' needs an argument");
	expect_usage_error(ARGS("-n", "1", "extra"), "unexpected argument 'extra'");
	/* a bad option is reported before the file is even read */
	expect_usage_error(ARGS("-c", "/nonexistent/vms.yaml", "--ring-slots", "3"),
			   "--ring-slots: '3' is not a power of two from 2 to 1048576");
}

static void expect_one_line(const char *const *args, int status, const char *line)
{
	struct run_result r;
	run_bin(&r, 0, args);
	if (r.status != status || strcmp(r.err, line) != 0 || r.out[0])
		fail_msg("%s ...: status %d, stderr '%s', stdout '%s'; expected %d and '%s'", args[0], r.status, r.err,
			 r.out, status, line);
	assert_int_equal(count_lines(r.err), 1);
	run_result_free(&r);
}

static void test_bin_config_errors(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char path[512], want[1024];

	expect_one_line(ARGS("-c", "/nonexistent/vms.yaml"), 2,
			"vmsampler: /nonexistent/vms.yaml: No such file or directory\n");

	snprintf(path, sizeof(path), "%s/syntax.yaml", dir);
	write_file(path, "interval: 1s\n\tcount: 1\n", 23);
	snprintf(want, sizeof(want),
		 "%s:2:1: found a tab character that violates indentation (while scanning a plain scalar at line 1)\n",
		 path);
	expect_one_line(ARGS("-c", path), 2, want);

	snprintf(path, sizeof(path), "%s/flow.yaml", dir);
	write_file(path, "sources: {netdev: {every: 1}\n", 29);
	snprintf(want, sizeof(want),
		 "%s:2:1: did not find expected ',' or '}' (while parsing a flow mapping at line 1)\n", path);
	expect_one_line(ARGS("-c", path), 2, want);

	snprintf(path, sizeof(path), "%s/value.yaml", dir);
	write_file(path, "count: 3\nsources:\n  diskstats:\n    every: 0\n", 44);
	snprintf(want, sizeof(want), "%s:4:12: sources.diskstats.every: '0' is out of range (1 to 1000000)\n", path);
	/* also with options that would be valid */
	expect_one_line(ARGS("-n", "1", "-c", path), 2, want);

	expect_one_line(ARGS("-c", dir), 2, (snprintf(want, sizeof(want), "vmsampler: %s: Is a directory\n", dir), want));
	tmpdir_free(dir);
}

static void test_bin_help_version(void **state)
{
	(void)state;
	struct run_result r, h;
	run_bin(&r, 0, ARGS("--help"));
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_memory_equal(r.out, "Usage: vmsampler [OPTIONS]\n", 27);
	assert_true(count_lines(r.out) > 20);
	run_bin(&h, 0, ARGS("-h", "-n", "3"));
	assert_int_equal(h.status, 0);
	assert_string_equal(h.out, r.out);
	run_result_free(&h);
	run_result_free(&r);

	char want[256];
	run_bin(&r, 0, ARGS("--version"));
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_memory_equal(r.out, "vmsampler " VMS_VERSION "\n", strlen("vmsampler " VMS_VERSION "\n"));
	snprintf(want, sizeof(want), "\nlibvirt: %s\nperf: %s\n", HAVE_LIBVIRT ? "yes" : "no",
		 HAVE_PERF ? "yes" : "no");
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "\nsources: "));
	assert_non_null(strstr(r.out, " loadavg"));
	assert_non_null(strstr(r.out, "\nformats: csv"));
	if (vms_sink_for_format(VMS_FORMAT_BIN))
		assert_non_null(strstr(r.out, "\nformats: csv bin\n"));
	else
		assert_non_null(strstr(r.out, "\nformats: csv\n"));
	run_result_free(&r);
	run_bin(&h, 0, ARGS("-V"));
	assert_int_equal(h.status, 0);
	run_result_free(&h);
}

/* Paths that cannot be used, a format the build has not: configuration
 * errors found at the start, one line and 2 (vmsampler(1), EXIT STATUS) */
static void test_bin_runtime_errors(void **state)
{
	(void)state;
	expect_one_line(ARGS("-n", "1", "-i", "10ms", "-o", "/nonexistent/dir/x.csv"), 2,
			"vmsampler: error: cannot open output /nonexistent/dir/x.csv: No such file or directory\n");
	expect_one_line(ARGS("-n", "1", "--proc-root", "/nonexistent/proc"), 2,
			"vmsampler: error: cannot open proc root /nonexistent/proc: No such file or directory\n");
	if (!vms_sink_for_format(VMS_FORMAT_BIN))
		expect_one_line(ARGS("-n", "1", "-o", "/tmp/never-written.vms"), 2,
				"vmsampler: error: this build has no binary (.vms) output\n");
}

static void test_bin_run(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char out[512], conf[512];
	struct run_result r;

	/* to a file */
	snprintf(out, sizeof(out), "%s/out.csv", dir);
	run_bin(&r, 0, ARGS("-i", "10ms", "-n", "3", "-o", out));
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(r.out, "");
	run_result_free(&r);
	char *csv = read_whole(out, NULL);
	assert_non_null(csv);
	assert_int_equal(count_lines(csv), 4);
	assert_memory_equal(csv, VMS_CSV_META ",", strlen(VMS_CSV_META ","));
	free(csv);

	/* to stdout (the default) */
	run_bin(&r, 0, ARGS("-i", "10ms", "-n", "2"));
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out), 3);
	run_result_free(&r);

	/* from a file, with one key overridden on the command line */
	snprintf(conf, sizeof(conf), "%s/c.yaml", dir);
	char yaml[1024];
	int n = snprintf(yaml, sizeof(yaml), "interval: 10ms\ncount: 2\noutput: %s\ncsv_layout: long\n", out);
	write_file(conf, yaml, (size_t)n);
	run_bin(&r, 0, ARGS("-c", conf, "-n", "3"));
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	run_result_free(&r);
	csv = read_whole(out, NULL);
	assert_non_null(csv);
	assert_memory_equal(csv, VMS_CSV_META ",column,value\r\n", strlen(VMS_CSV_META ",column,value\r\n"));
	/* three frames in the long layout: every row's seq is 1, 2 or 3 */
	unsigned frames = 0;
	for (const char *p = strchr(csv, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
		unsigned seq = (unsigned)strtoul(p + 1, NULL, 10);
		assert_true(seq >= 1 && seq <= 3);
		if (seq > frames)
			frames = seq;
	}
	assert_int_equal(frames, 3);
	free(csv);
	tmpdir_free(dir);
}

/* defaults < file < command line, seen through --print-config, whose
 * output is itself a configuration file that gives the same result. */
static void test_bin_precedence(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char conf[512], conf2[512];
	struct run_result r, r2;

	snprintf(conf, sizeof(conf), "%s/c.yaml", dir);
	const char *y = "interval: 5s\ncount: 10\nlog_level: debug\nsources:\n  diskstats: {exclude: []}\n";
	write_file(conf, y, strlen(y));
	run_bin(&r, 0, ARGS("-i", "2s", "-c", conf, "--quiet", "--print-config"));
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_non_null(strstr(r.out, "\ninterval: 2s\n"));        /* command line */
	assert_non_null(strstr(r.out, "\ncount: 10\n"));           /* file */
	assert_non_null(strstr(r.out, "\nlog_level: error\n"));    /* command line */
	assert_non_null(strstr(r.out, "\nring_slots: 64\n"));      /* default */
	assert_non_null(strstr(r.out, "\n    exclude: []\n"));     /* file: a list replaced */

	snprintf(conf2, sizeof(conf2), "%s/printed.yaml", dir);
	write_file(conf2, r.out, strlen(r.out));
	run_bin(&r2, 0, ARGS("-c", conf2, "--print-config"));
	assert_int_equal(r2.status, 0);
	assert_string_equal(r2.out, r.out);
	run_result_free(&r);
	run_result_free(&r2);
	tmpdir_free(dir);
}

/* SIGINT and SIGTERM end a run without -n with status 0 and nothing on
 * stderr; the frames taken are written. */
static void test_bin_signals(void **state)
{
	(void)state;
	const int sigs[] = {SIGTERM, SIGINT};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(sigs); i++) {
		struct run_result r;
		run_bin(&r, sigs[i], ARGS("-i", "10ms", "-o", "-"));
		assert_int_equal(r.status, 0);
		assert_string_equal(r.err, "");
		assert_true(count_lines(r.out) >= 1);
		assert_memory_equal(r.out, VMS_CSV_META ",", strlen(VMS_CSV_META ","));
		run_result_free(&r);
	}
}

VMS_TEST_MAIN(NULL, NULL,
	test_parse_errors, test_parse_ok, test_bin_usage_errors, test_bin_config_errors,
	test_bin_help_version, test_bin_runtime_errors, test_bin_run, test_bin_precedence,
	test_bin_signals)
