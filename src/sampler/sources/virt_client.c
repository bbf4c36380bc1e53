/* SPDX-License-Identifier: MIT */
#include "virt_client.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_FD 3
#define IN_MAX (2 * VMS_VP_MAX)

void vms_vclient_init(struct vms_vclient *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	vms_vp_w_init(&c->out);
}

/* fork + exec (posix_spawn's header wants <sched.h>, which our own
 * src/sched.h shadows on the include path) */
int vms_vclient_spawn(struct vms_vclient *c, char *const argv[])
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0) {
		int e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0) {
		/* the child: only async-signal-safe calls until exec */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		/* its own process group: Ctrl-C reaches the sampler, which then
		 * stops the agent in order */
		setpgid(0, 0);
		/* dup2 to another number clears close-on-exec on the copy */
		if (sv[1] == AGENT_FD) {
			int d = fcntl(sv[1], F_DUPFD_CLOEXEC, AGENT_FD + 1);
			if (d < 0)
				_exit(127);
			sv[1] = d;
		}
		if (dup2(sv[1], AGENT_FD) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(sv[1]);
	c->pid = pid;
	c->fd = sv[0];
	c->inpos = c->inlen = c->taken = 0;
	vms_vp_w_reset(&c->out);
	c->outpos = 0;
	return 0;
}

void vms_vclient_stop(struct vms_vclient *c, unsigned grace_ms)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->pid > 0) {
		pid_t pid = c->pid;
		int st;
		if (grace_ms) {
			kill(pid, SIGTERM);
			for (unsigned t = 0; t < grace_ms; t += 10) {
				if (waitpid(pid, &st, WNOHANG) == pid) {
					pid = 0;
					break;
				}
				nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
			}
		}
		if (pid) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
		}
	}
	c->pid = 0;
	c->inpos = c->inlen = c->taken = 0;
	vms_vp_w_reset(&c->out);
	c->outpos = 0;
}

ssize_t vms_vclient_read(struct vms_vclient *c)
{
	ssize_t total = 0;
	if (c->fd < 0)
		return -EBADF;
	for (;;) {
		/* drop what was decoded */
		c->inpos += c->taken;
		c->taken = 0;
		if (c->inpos && c->inpos == c->inlen)
			c->inpos = c->inlen = 0;
		if (c->inlen == c->incap) {
			if (c->inpos) {
				memmove(c->in, c->in + c->inpos, c->inlen - c->inpos);
				c->inlen -= c->inpos;
				c->inpos = 0;
			} else {
				size_t cap = c->incap ? c->incap * 2 : 16384;
				if (cap > IN_MAX)
					return -EMSGSIZE;
				uint8_t *n = realloc(c->in, cap);
				if (!n)
					return -ENOMEM;
				c->in = n;
				c->incap = cap;
			}
		}
		ssize_t n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
		if (n > 0) {
			c->inlen += (size_t)n;
			total += n;
			continue;
		}
		if (n == 0)
			return total ? total : -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return total;
		return total ? total : -errno;
	}
}

int vms_vclient_next(struct vms_vclient *c, struct vms_vp_msg *m)
{
	c->inpos += c->taken;
	c->taken = 0;
	int n = vms_vp_frame(c->in + c->inpos, c->inlen - c->inpos, m);
	if (n <= 0)
		return n;
	c->taken = (size_t)n;
	return 1;
}

int vms_vclient_flush(struct vms_vclient *c)
{
	if (c->fd < 0)
		return -EBADF;
	return vms_vp_w_send(&c->out, c->fd, &c->outpos);
}

void vms_vclient_trim(struct vms_vclient *c, size_t keep)
{
	if (c->out.len - c->outpos <= keep || c->outpos != 0)
		return; /* never cut a message that is half sent */
	c->dropped++;
	vms_vp_w_reset(&c->out);
}

void vms_vclient_free(struct vms_vclient *c)
{
	vms_vclient_stop(c, 0);
	free(c->in);
	vms_vp_w_free(&c->out);
	c->in = NULL;
	c->incap = 0;
}
