/* SPDX-License-Identifier: MIT */
/* export.h - `vmsampler export`: a live ring or a growing .vms file as
 * Prometheus metrics over HTTP (libmicrohttpd), named by metrics.h. */
#ifndef VMS_EXPORT_H
#define VMS_EXPORT_H

int vms_export_main(int argc, char **argv);

#endif
