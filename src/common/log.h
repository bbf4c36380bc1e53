/* SPDX-License-Identifier: MIT */
/* log.h - diagnostics to stderr.  Only main, the loop and sinks' owners
 * log; library-like modules return -errno.  The sampling tick never logs:
 * vms_log_count lets tests prove it. */
#ifndef VMS_LOG_H
#define VMS_LOG_H

#include "vms.h"

enum vms_log_level { VMS_LOG_ERR = 0, VMS_LOG_WARN = 1, VMS_LOG_INFO = 2, VMS_LOG_DEBUG = 3 };

extern int vms_log_level;
/* Messages emitted so far (all levels, including filtered ones). */
extern unsigned long vms_log_count;

void vms_log(int level, const char *fmt, ...) VMS_PRINTF(2, 3);
#define vms_err(...) vms_log(VMS_LOG_ERR, __VA_ARGS__)
#define vms_warn(...) vms_log(VMS_LOG_WARN, __VA_ARGS__)
#define vms_info(...) vms_log(VMS_LOG_INFO, __VA_ARGS__)
#define vms_debug(...) vms_log(VMS_LOG_DEBUG, __VA_ARGS__)

#endif
