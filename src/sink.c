/* SPDX-License-Identifier: MIT */
#include "sink.h"

const struct vms_sink_ops *vms_sink_for_format(int format)
{
	switch (format) {
	case VMS_FORMAT_CSV:
		return &vms_sink_csv;
	case VMS_FORMAT_BIN:
		return &vms_sink_bin;
	default:
		return NULL;
	}
}
