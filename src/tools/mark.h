/* SPDX-License-Identifier: MIT */
/* mark.h - `vmsampler mark`: a marker in a running sampler's stream. */
#ifndef VMS_MARK_H
#define VMS_MARK_H

int vms_mark_main(int argc, char **argv);

#endif
