/* SPDX-License-Identifier: MIT */
#include "runbin.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		char *nb = realloc(buf, cap * 2 + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

const char *src_path(const char *rel)
{
	static char buf[PATH_MAX];
	const char *base = getenv("VMS_SRCDIR");
	snprintf(buf, sizeof(buf), "%s/%s", base ? base : ".", rel);
	return buf;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

void run_bin(struct run_result *r, int sig, const char *const *args)
{
	const char *bin = getenv("VMS_BIN");
	char outp[] = "/tmp/vmsrun.out.XXXXXX", errp[] = "/tmp/vmsrun.err.XXXXXX";
	const char *argv[64];
	unsigned n = 0;

	assert_non_null(bin);
	argv[n++] = bin;
	for (; args && *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;

	int ofd = mkstemp(outp), efd = mkstemp(errp);
	assert_true(ofd >= 0 && efd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		dup2(in, 0);
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	if (sig) {
		/* wait for the first line of output: the loop is running */
		for (int i = 0; i < 500; i++) {
			struct stat st;
			if (fstat(ofd, &st) == 0 && st.st_size > 0)
				break;
			sleep_ms(10);
		}
		kill(pid, sig);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	close(ofd);
	close(efd);
	r->out = read_whole(outp, NULL);
	r->err = read_whole(errp, NULL);
	unlink(outp);
	unlink(errp);
	assert_non_null(r->out);
	assert_non_null(r->err);
}

void run_result_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

unsigned count_lines(const char *s)
{
	unsigned n = 0;
	for (; *s; s++) {
		if (*s == '\n')
			n++;
		else if (s[1] == '\0')
			n++;
	}
	return n;
}
