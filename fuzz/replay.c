/* SPDX-License-Identifier: MIT */
/* replay.c - runs a fuzz target over every file of its corpus directory
 * (meson test replays the committed corpus; with -Dfuzz=enabled the same
 * target links against libFuzzer instead). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			FILE *f = fopen(path, "rb");
			if (!f)
				continue;
			fseek(f, 0, SEEK_END);
			long len = ftell(f);
			fseek(f, 0, SEEK_SET);
			uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
			size_t got = fread(buf, 1, (size_t)len, f);
			fclose(f);
			LLVMFuzzerTestOneInput(buf, got);
			free(buf);
			n++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", n);
	return n > 0 ? 0 : 1;
}
