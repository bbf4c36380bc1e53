/* SPDX-License-Identifier: MIT */
/* test_sockwatch.c - the agent's wait for libvirt's socket (sockwatch.h):
 * which directory each kind of URI has its socket in, after libvirt's
 * documentation of its URIs (https://libvirt.org/uri.html, "Local
 * URIs": the system daemon's socket in /run/libvirt, the session's in
 * $XDG_RUNTIME_DIR/libvirt; "socket=" naming another; remote transports
 * and in-process drivers: no local socket to wait for), and the inotify
 * watch on real directories: from the nearest existing ancestor down to
 * the socket's directory as they are made, a socket bound there, a
 * directory removed and made again, nothing after disarm. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "testutil.h"

#include "sockwatch.h"

static char name_out[256];

static const char *dir_of(const char *uri, bool root)
{
	static char out[4096];
	return vms_sockwatch_dir(uri, root, "/run/user/1000", "/home/u", out, sizeof(out), name_out, sizeof(name_out)) == 0
		       ? out
		       : NULL;
}

static void test_sockdir(void **state)
{
	(void)state;
	static const struct {
		const char *uri;
		bool root;
		const char *dir; /* NULL: nothing to watch */
		const char *name;
	} t[] = {
		{NULL, true, "/run/libvirt", ""},
		{"", true, "/run/libvirt", ""},
		{NULL, false, "/run/user/1000/libvirt", ""},
		{"qemu:///system", false, "/run/libvirt", ""},
		{"qemu+unix:///system", true, "/run/libvirt", ""},
		{"xen:///system", true, "/run/libvirt", ""},
		{"qemu:///session", true, "/run/user/1000/libvirt", ""},
		{"qemu:///system?socket=/run/vmsampler-it-nonexistent.sock", true, "/run", "vmsampler-it-nonexistent.sock"},
		{"qemu+unix:///session?socket=/tmp/a/b.sock&mode=legacy", true, "/tmp/a", "b.sock"},
		{"qemu:///system?mode=direct&socket=/s", true, "/", "s"},
		{"qemu:///system?socket=/tmp/a/", true, NULL, NULL}, /* a directory, no name */
		{"qemu+ssh://root@host/system?socket=/x/y", true, NULL}, /* the socket is on host */
		{"qemu+ssh://host/system", true, NULL},
		{"qemu+tcp://host/system", true, NULL},
		{"qemu+tls://host:16514/system", true, NULL},
		{"qemu://host/system", true, NULL},
		{"test:///default", true, NULL},
		{"qemu:///embed?root=/var/lib/x", true, NULL},
		{"lxc:///", true, NULL},
		{"qemu:///system?socket=relative/s", true, NULL},
		{"garbage", true, NULL},
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *d = dir_of(t[i].uri, t[i].root);
		if (!t[i].dir != !d || (d && (strcmp(d, t[i].dir) != 0 || strcmp(name_out, t[i].name) != 0)))
			fail_msg("%s (%s): %s '%s', not %s '%s'", t[i].uri ? t[i].uri : "NULL",
				 t[i].root ? "root" : "user", d ? d : "nothing", name_out,
				 t[i].dir ? t[i].dir : "nothing", t[i].name ? t[i].name : "");
	}
	/* $XDG_RUNTIME_DIR unset: under $HOME/.cache */
	char out[64], n[16];
	assert_int_equal(vms_sockwatch_dir("qemu:///session", false, NULL, "/home/u", out, sizeof(out), n, sizeof(n)), 0);
	assert_string_equal(out, "/home/u/.cache/libvirt");
	assert_int_equal(vms_sockwatch_dir("qemu:///session", false, NULL, NULL, out, sizeof(out), n, sizeof(n)), -1);
	/* no room: nothing rather than a cut path or name */
	assert_int_equal(vms_sockwatch_dir("qemu:///system", true, NULL, NULL, out, 8, n, sizeof(n)), -1);
	assert_int_equal(vms_sockwatch_dir("qemu:///system?socket=/run/a-long-socket-name", true, NULL, NULL, out, sizeof(out),
				     n, sizeof(n)),
			 -1);
}

static void make_socket(const char *path)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 1), 0);
	close(s);
}

static void test_watch(void **state)
{
	(void)state;
	char target[4096], sock[4200], other[4200];
	snprintf(target, sizeof(target), "%s/run/libvirt", test_tmp);
	snprintf(sock, sizeof(sock), "%s/libvirt-sock-ro", target);
	snprintf(other, sizeof(other), "%s/qemu", target);
	struct vms_sockwatch w;
	assert_int_equal(vms_sockwatch_open(&w, target, ""), 0);
	/* neither run nor run/libvirt exists: the temporary directory is
	 * watched, for "run" */
	assert_int_equal(vms_sockwatch_arm(&w), 0);
	assert_false(w.at_target);
	assert_string_equal(w.next, "run");
	assert_false(vms_sockwatch_read(&w));
	/* something else appears there: nothing (a busy /run costs nothing) */
	assert_int_equal(mkdir(tp("other"), 0755), 0);
	assert_false(vms_sockwatch_read(&w));
	assert_string_equal(w.next, "run");
	/* run: a step on the way, not yet a reason to try */
	assert_int_equal(mkdir(tp("run"), 0755), 0);
	assert_false(vms_sockwatch_read(&w));
	assert_false(w.at_target);
	assert_string_equal(w.next, "libvirt");
	/* run/libvirt itself: a try (the socket may be in it already) */
	assert_int_equal(mkdir(target, 0755), 0);
	assert_true(vms_sockwatch_read(&w));
	assert_true(w.at_target);
	assert_false(vms_sockwatch_read(&w));
	/* the daemon's other entries: nothing; its socket: a try */
	assert_int_equal(mkdir(other, 0755), 0);
	assert_false(vms_sockwatch_read(&w));
	make_socket(sock);
	assert_true(vms_sockwatch_read(&w));
	assert_false(vms_sockwatch_read(&w));
	/* and its mode changed */
	assert_int_equal(chmod(sock, 0666), 0);
	assert_true(vms_sockwatch_read(&w));
	/* the directory goes (the daemon's run directory cleaned up): the
	 * watch falls back to run, and follows it when it comes back */
	assert_int_equal(unlink(sock), 0);
	assert_int_equal(rmdir(other), 0);
	assert_int_equal(rmdir(target), 0);
	assert_false(vms_sockwatch_read(&w));
	assert_false(w.at_target);
	assert_true(w.wd >= 0);
	assert_string_equal(w.next, "libvirt");
	assert_int_equal(mkdir(target, 0755), 0);
	assert_true(vms_sockwatch_read(&w));
	assert_true(w.at_target);
	/* disarmed (connected): nothing */
	vms_sockwatch_disarm(&w);
	make_socket(sock);
	assert_false(vms_sockwatch_read(&w));
	/* armed again: the directory itself */
	assert_int_equal(vms_sockwatch_arm(&w), 0);
	assert_true(w.at_target);
	vms_sockwatch_close(&w);
	assert_int_equal(w.fd, -1);
	assert_false(vms_sockwatch_read(&w));

	/* a socket named by socket=: that name only */
	char dir2[4096], s2[4200];
	snprintf(dir2, sizeof(dir2), "%s/d2", test_tmp);
	assert_int_equal(mkdir(dir2, 0755), 0);
	assert_int_equal(vms_sockwatch_open(&w, dir2, "my.s"), 0);
	assert_int_equal(vms_sockwatch_arm(&w), 0);
	assert_true(w.at_target);
	snprintf(s2, sizeof(s2), "%s/other-sock", dir2);
	make_socket(s2);
	assert_false(vms_sockwatch_read(&w));
	snprintf(s2, sizeof(s2), "%s/my.s", dir2);
	make_socket(s2);
	assert_true(vms_sockwatch_read(&w));
	vms_sockwatch_close(&w);
}

VMS_TEST_MAIN(tmp_setup, tmp_teardown, test_sockdir, test_watch)
