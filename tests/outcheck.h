/* SPDX-License-Identifier: MIT */
/* outcheck.h - run the vmsampler binary ($VMS_BIN) as a child that the
 * test steers (its stdout a pipe the test owns, its progress read from its
 * --ring file), and check the frames it wrote: every seq is either in the
 * output or counted in lost_frames on the first frame after the gap. */
#ifndef VMS_OUTCHECK_H
#define VMS_OUTCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A proc root with loadavg and the net/dev of fixture root `netdev_root`
 * (tests/fixtures/roots/...), and a configuration file beside it that
 * leaves only those two sources on (no perf, no libvirt: the frames'
 * shape is the fixture's, whatever the host).  Paths under dir. */
void sampler_root(const char *dir, const char *netdev_root, char *root, char *conf, size_t len);
/* Rewrite root's net/dev in place with fixture root's (the source keeps
 * the file open). */
void sampler_set_netdev(const char *root, const char *netdev_root);

/* Start $VMS_BIN with args (NULL-terminated, without argv[0]); stdout to
 * out_fd (-1: /dev/null), stderr to the file err_path; stdin /dev/null. */
pid_t spawn_bin(const char *const *args, int out_fd, const char *err_path);
/* write_seq of the ring at path (0 if it cannot be read yet). */
uint64_t ring_write_seq(const char *path);
/* Flags word of the ring header at path. */
uint32_t ring_flags(const char *path);
/* Wait (polling, 60 s at most) until the ring at path has committed
 * frame seq; fails the test if the child exits first. */
void wait_ring_seq(const char *path, pid_t pid, uint64_t seq);
/* Wait for the child (at most timeout_s, then SIGKILL): its exit status,
 * or 128 + the signal that ended it. */
int wait_child(pid_t pid, int timeout_s);

/* Frames as read back from the outputs, in order. */
struct frames {
	uint64_t *seq;
	uint32_t *flags, *lost;
	size_t n, cap;
};
void frames_add(struct frames *fr, uint64_t seq, uint32_t flags, uint32_t lost);
/* Append the rows of a CSV output (wide layout; header lines skipped). */
void frames_add_csv(struct frames *fr, const char *csv);
/* Append the frames of a .vms file (decoded by `vmsampler dump`). */
void frames_add_vms(struct frames *fr, const char *path);
void frames_free(struct frames *fr);

struct frames_sum {
	size_t gaps;       /* frames with seqs missing before them */
	uint64_t missing;  /* seqs missing in all */
	uint64_t lost_sum; /* sum of lost_frames */
	uint64_t last;     /* last seq */
};
/* Check the whole run: seqs strictly increase from 1; the first frame
 * after a gap carries exactly the number of seqs missing (and the gap
 * flag 8), a frame without a gap before it carries 0. */
void frames_check(const struct frames *fr, struct frames_sum *sum);

#endif
