/* SPDX-License-Identifier: MIT */
/* libexec.c - where the sampler finds the programs it runs (libexec.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libexec.h"
#include "vms_build.h"

bool vms_executable(const char *path)
{
	struct stat st;
	return path && stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *vms_libexec_path(const char *name)
{
	char self[PATH_MAX], *p = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (asprintf(&p, "%s/%s", self, name) < 0)
				return NULL;
			if (vms_executable(p))
				return p;
			free(p);
		}
	}
	if (asprintf(&p, "%s/%s", VMS_LIBEXECDIR, name) < 0)
		return NULL;
	return p;
}
