/* SPDX-License-Identifier: MIT */
/* The real binary on a file system that is too small or fills up: a
 * small tmpfs mounted by the test.
 *   - a --ring that does not fit: one line and exit 1 at start, not SIGBUS
 *     (the file was sparse: the first write to a page with no block died);
 *   - a ring that must grow when the file system is full: sampling goes on
 *     to the output, the ring file is closed for its readers, one line;
 *   - SIGHUP while the disk of the output is full: the old file's error is
 *     reported as what it is, the new file gets its header, and once space
 *     returns writing resumes (no second SIGHUP); every frame is in one of
 *     the two files or counted in lost_frames on the first frame after its
 *     gap;
 *   - rotation (--rotate 64K) while the disk fills and empties:
 *     no new file while the output fails, writing resumes by itself, and
 *     the files of the series hold every frame once or count it in
 *     lost_frames, in the order of their names.
 * Mounting needs root (CAP_SYS_ADMIN): without it the test is skipped
 * (exit 77), unless VMS_REQUIRE_E2E is set (CI), then it fails.  It runs
 * in a mount namespace of its own, so that whatever happens to it no
 * mount outlives it; each test also unmounts its own. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/sched.h> /* CLONE_NEWNS (src/sampler/sched.h shadows <sched.h>) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "outcheck.h"
#include "runbin.h"
#include <vmsampler/ring.h>

struct fs {
	char *dir;      /* scratch directory (not on the tmpfs) */
	char mnt[512];  /* the tmpfs */
	bool mounted;
	pid_t pid;      /* the sampler, while it runs */
};

static int fs_setup(void **state)
{
	struct fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -1;
	fs->dir = tmpdir_make();
	if (!fs->dir)
		return -1;
	snprintf(fs->mnt, sizeof(fs->mnt), "%s/mnt", fs->dir);
	if (mkdir(fs->mnt, 0755) < 0)
		return -1;
	*state = fs;
	return 0;
}

/* Runs whether the test passed or not. */
static int fs_teardown(void **state)
{
	struct fs *fs = *state;
	if (fs->pid > 0) {
		kill(fs->pid, SIGKILL);
		waitpid(fs->pid, NULL, 0);
	}
	if (fs->mounted && umount2(fs->mnt, 0) < 0)
		umount2(fs->mnt, MNT_DETACH);
	tmpdir_free(fs->dir);
	free(fs);
	return 0;
}

static void fs_mount(struct fs *fs, const char *size)
{
	char opt[64];
	snprintf(opt, sizeof(opt), "size=%s,mode=0755", size);
	if (mount("tmpfs", fs->mnt, "tmpfs", MS_NOSUID | MS_NODEV, opt) < 0)
		fail_msg("mount -t tmpfs -o %s %s: %s", opt, fs->mnt, strerror(errno));
	fs->mounted = true;
}

static char *slurp_text(const char *path)
{
	char *s = read_whole(path, NULL);
	if (!s)
		fail_msg("cannot read %s", path);
	return s;
}

/* Fill the file system of dir to the last byte. */
static void fill_up(const char *path)
{
	static char block[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	for (size_t chunk = sizeof(block); chunk;) {
		ssize_t n = write(fd, block, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			assert_int_equal(errno, ENOSPC);
			chunk /= 2; /* the last pages */
		}
	}
	close(fd);
}

/* The directory holds exactly the names given (NULL-terminated). */
static void assert_dir_holds(const char *dir, const char *const *names)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	unsigned have = 0, want = 0;
	while (names[want])
		want++;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		bool known = false;
		for (unsigned i = 0; names[i]; i++)
			known |= strcmp(e->d_name, names[i]) == 0;
		if (!known)
			fail_msg("%s holds %s", dir, e->d_name);
		have++;
	}
	closedir(d);
	assert_int_equal(have, want);
}

/* --ring on a file system with less room than the ring. */
static void test_ring_larger_than_fs(void **state)
{
	struct fs *fs = *state;
	char root[512], conf[512], ring[600], errp[600];
	sampler_root(fs->dir, "procfs-pid26231-netns", root, conf, sizeof(root));
	fs_mount(fs, "32k"); /* this ring is ~92 KiB */
	snprintf(ring, sizeof(ring), "%s/ring", fs->mnt);
	snprintf(errp, sizeof(errp), "%s/stderr", fs->dir);
	fs->pid = spawn_bin((const char *const[]){"-c", conf, "--proc-root", root, "-i", "10ms", "-n", "100",
						   "--ring", ring, "-o", "/dev/null", NULL},
			    -1, errp);
	int st = wait_child(fs->pid, 60);
	fs->pid = 0;
	char *err = slurp_text(errp);
	/* not 135: SIGBUS */
	if (st != 1 || count_lines(err) != 1 || !strstr(err, ring) || !strstr(err, strerror(ENOSPC)))
		fail_msg("status %d, stderr:\n%s", st, err);
	free(err);
	const char *none[] = {NULL};
	assert_dir_holds(fs->mnt, none); /* nor a temporary file left */
}

/* The ring must grow (49 interfaces appear) when its file system has no
 * room for the larger one. */
static void test_ring_cannot_grow(void **state)
{
	struct fs *fs = *state;
	char root[512], conf[512], ring[600], errp[600], out[600];
	sampler_root(fs->dir, "procfs-pid26231-netns", root, conf, sizeof(root));
	fs_mount(fs, "320k"); /* ~92 KiB now, ~700 KiB grown */
	snprintf(ring, sizeof(ring), "%s/ring", fs->mnt);
	snprintf(errp, sizeof(errp), "%s/stderr", fs->dir);
	snprintf(out, sizeof(out), "%s/out.csv", fs->dir);
	/* -q: errors only (the new generation and the CSV roll are said at
	 * the info level) */
	fs->pid = spawn_bin((const char *const[]){"-q", "-c", conf, "--proc-root", root, "-i", "10ms", "-n",
						   "100", "--ring", ring, "-o", out, NULL},
			    -1, errp);
	wait_ring_seq(ring, fs->pid, 10);
	sampler_set_netdev(root, "pcp-bigsys-hpbl920-49if");
	int st = wait_child(fs->pid, 60);
	fs->pid = 0;
	char *err = slurp_text(errp);
	if (st != 0 || count_lines(err) != 1 || !strstr(err, ring) || !strstr(err, "cannot grow") ||
	    !strstr(err, strerror(ENOSPC)))
		fail_msg("status %d, stderr:\n%s", st, err);
	free(err);
	/* its readers see the writer gone, not a ring that stopped */
	uint32_t fl = ring_flags(ring);
	assert_true(fl & VMS_RING_F_CLOSED);
	assert_false(fl & VMS_RING_F_SUPERSEDED);
	const char *only_ring[] = {"ring", NULL};
	assert_dir_holds(fs->mnt, only_ring);
	/* every frame in the CSV files: out.csv, then one per generation */
	struct frames fr = {0};
	struct frames_sum sum;
	char *s = slurp_text(out);
	frames_add_csv(&fr, s);
	free(s);
	unsigned files = 1;
	for (unsigned g = 2; g < 10; g++) {
		char p[700];
		snprintf(p, sizeof(p), "%s/out.g%u.csv", fs->dir, g);
		if ((s = read_whole(p, NULL))) {
			frames_add_csv(&fr, s);
			free(s);
			files++;
		}
	}
	assert_true(files >= 2); /* the new columns did come */
	frames_check(&fr, &sum);
	assert_int_equal(fr.n, 100);
	assert_int_equal(sum.last, 100);
	assert_int_equal(sum.lost_sum, 0);
	frames_free(&fr);
}

/* The 600 frames of a run that met a full disk, read back: every one is
 * there once or counted in lost_frames, the full disk did cost some, and
 * the run resumed by itself to its last frame.  Frees fr. */
static void check_600(struct frames *fr)
{
	struct frames_sum sum;
	frames_check(fr, &sum);
	assert_true(sum.gaps >= 1);
	assert_int_equal(sum.last, 600);
	assert_int_equal(sum.lost_sum, 600 - fr->n);
	frames_free(fr);
}

/* logrotate on a full disk: mv out out.1; kill -HUP; space comes back. */
static void sighup_on_full_disk(struct fs *fs, const char *ext)
{
	char root[512], conf[512], ring[600], errp[600], out[600], out1[600], fill[600];
	sampler_root(fs->dir, "pcp-bigsys-hpbl920-49if", root, conf, sizeof(root));
	fs_mount(fs, "2m");
	snprintf(ring, sizeof(ring), "%s/ring", fs->dir); /* progress, off the tmpfs */
	snprintf(errp, sizeof(errp), "%s/stderr", fs->dir);
	snprintf(out, sizeof(out), "%s/out.%s", fs->mnt, ext);
	snprintf(out1, sizeof(out1), "%s/out.1.%s", fs->mnt, ext);
	snprintf(fill, sizeof(fill), "%s/fill", fs->mnt);
	/* 49 interfaces: records of ~0.8 (.vms) to ~1.7 kB (CSV), so the
	 * 64 KiB output buffer and 8 ring slots hold fewer than 100 frames */
	fs->pid = spawn_bin((const char *const[]){"-c", conf, "--proc-root", root, "-i", "10ms", "-n", "600",
						   "--ring-slots", "8", "--ring", ring, "-o", out, NULL},
			    -1, errp);
	wait_ring_seq(ring, fs->pid, 20);
	fill_up(fill);
	wait_ring_seq(ring, fs->pid, ring_write_seq(ring) + 150); /* frames lost */
	assert_int_equal(rename(out, out1), 0);
	assert_int_equal(kill(fs->pid, SIGHUP), 0);
	wait_ring_seq(ring, fs->pid, ring_write_seq(ring) + 150); /* the new file is full too */
	assert_int_equal(unlink(fill), 0);                     /* space returns */
	int st = wait_child(fs->pid, 60);
	fs->pid = 0;
	char *err = slurp_text(errp);
	if (st != 0 || !strstr(err, strerror(ENOSPC)) || !strstr(err, "before SIGHUP") ||
	    strstr(err, strerror(EINVAL)))
		fail_msg("status %d, stderr:\n%s", st, err);
	free(err);

	struct frames fr = {0};
	size_t n1;
	if (strcmp(ext, "vms") == 0) {
		frames_add_vms(&fr, out1);
		n1 = fr.n;
		frames_add_vms(&fr, out); /* decodes: header and SCHEMA first */
	} else {
		char *s = slurp_text(out1);
		frames_add_csv(&fr, s);
		free(s);
		n1 = fr.n;
		s = slurp_text(out);
		assert_int_equal(strncmp(s, "seq,", 4), 0); /* the new file's header */
		frames_add_csv(&fr, s);
		free(s);
	}
	assert_true(n1 > 0 && fr.n > n1);
	check_600(&fr); /* resumed without a second SIGHUP */
}

static void test_sighup_full_disk_vms(void **state)
{
	sighup_on_full_disk(*state, "vms");
}

static void test_sighup_full_disk_csv(void **state)
{
	sighup_on_full_disk(*state, "csv");
}

/* The rotated files out-*.EXT of dir, in name order, into fr. */
static size_t add_rotated(struct frames *fr, const char *dir, const char *ext)
{
	struct dirent **v;
	int n = scandir(dir, &v, NULL, alphasort);
	size_t files = 0;
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		const char *e = strrchr(v[i]->d_name, '.');
		if (strncmp(v[i]->d_name, "out-", 4) == 0 && e && strcmp(e + 1, ext) == 0) {
			char p[1200];
			snprintf(p, sizeof(p), "%s/%s", dir, v[i]->d_name);
			if (strcmp(ext, "vms") == 0) {
				frames_add_vms(fr, p);
			} else {
				char *s = slurp_text(p);
				assert_int_equal(strncmp(s, "seq,", 4), 0); /* each file's header */
				frames_add_csv(fr, s);
				free(s);
			}
			files++;
		}
		free(v[i]);
	}
	free(v);
	return files;
}

static void rotate_on_full_disk(struct fs *fs, const char *ext)
{
	char root[512], conf[512], ring[600], errp[600], out[600], fill[600];
	sampler_root(fs->dir, "pcp-bigsys-hpbl920-49if", root, conf, sizeof(root));
	fs_mount(fs, "2m");
	snprintf(ring, sizeof(ring), "%s/ring", fs->dir);
	snprintf(errp, sizeof(errp), "%s/stderr", fs->dir);
	snprintf(out, sizeof(out), "%s/out.%s", fs->mnt, ext);
	snprintf(fill, sizeof(fill), "%s/fill", fs->mnt);
	fs->pid = spawn_bin((const char *const[]){"-c", conf, "--proc-root", root, "-i", "10ms", "-n", "600",
						   "--ring-slots", "8", "--ring", ring, "--rotate", "64K",
						   "-o", out, NULL},
			    -1, errp);
	wait_ring_seq(ring, fs->pid, 60);
	fill_up(fill);
	wait_ring_seq(ring, fs->pid, ring_write_seq(ring) + 150); /* frames lost */
	assert_int_equal(unlink(fill), 0);                     /* space returns */
	int st = wait_child(fs->pid, 60);
	fs->pid = 0;
	char *err = slurp_text(errp);
	if (st != 0 || !strstr(err, strerror(ENOSPC)) || !strstr(err, "writing again"))
		fail_msg("status %d, stderr:\n%s", st, err);
	free(err);
	struct frames fr = {0};
	size_t files = add_rotated(&fr, fs->mnt, ext);
	assert_true(files >= 3);
	check_600(&fr);
}

static void test_rotate_full_disk_vms(void **state)
{
	rotate_on_full_disk(*state, "vms");
}

static void test_rotate_full_disk_csv(void **state)
{
	rotate_on_full_disk(*state, "csv");
}

static int cannot(const char *what)
{
	const char *req = getenv("VMS_REQUIRE_E2E");
	if (req && *req && strcmp(req, "0") != 0) {
		printf("FAIL: %s (VMS_REQUIRE_E2E is set)\n", what);
		return 1;
	}
	printf("SKIP: %s\n", what);
	return 77;
}

VMS_TESTS(
	test_ring_larger_than_fs, test_ring_cannot_grow, test_sighup_full_disk_vms,
	test_sighup_full_disk_csv, test_rotate_full_disk_vms, test_rotate_full_disk_csv);

int main(void)
{
	if (geteuid() != 0)
		return cannot("mounting a tmpfs needs root");
	/* a mount namespace of our own: nothing mounted here survives us */
	if (syscall(SYS_unshare, CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		char why[160];
		snprintf(why, sizeof(why), "cannot make a mount namespace: %s", strerror(errno));
		return cannot(why);
	}
	char *probe = tmpdir_make();
	if (!probe)
		return 1;
	int e = mount("tmpfs", probe, "tmpfs", 0, "size=4k") < 0 ? errno : 0;
	if (!e)
		umount2(probe, 0);
	rmdir(probe);
	free(probe);
	if (e) {
		char why[160];
		snprintf(why, sizeof(why), "cannot mount a tmpfs: %s", strerror(e));
		return cannot(why);
	}
	return vms_run_list(NULL, NULL, fs_setup, fs_teardown);
}
