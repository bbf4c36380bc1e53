/* SPDX-License-Identifier: MIT */
/* libexec.h - where the sampler finds the programs it runs: its libvirt
 * agent (vmsampler-virt) and the reader tools (vmsampler-tools, which
 * `vmsampler dump|tail` become).  They sit next to its own executable in
 * the build directory, and in libexecdir once installed; keeping them out
 * of the sampler's binary keeps libvirt and the reader library out of the
 * process that samples. */
#ifndef VMS_LIBEXEC_H
#define VMS_LIBEXEC_H

#include <stdbool.h>

/* A regular file we may execute. */
bool vms_executable(const char *path);

/* The path of program NAME: next to our own executable if it is there,
 * else in libexecdir (which may not have it: the caller's exec says so).
 * Allocated; NULL when out of memory. */
char *vms_libexec_path(const char *name);

#endif
