/*
 * replay.c: runs a harness over files and folders of inputs, each once,
 * without libFuzzer (make test builds every harness with this, with the
 * project's compiler): exit 0 when every input was read, whatever the
 * reader made of it; a crash or a sanitizer report fails the test.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (n == cap)
			buf = realloc(buf, cap = cap ? 2 * cap : 65536);
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the files of a folder in name order, or the file itself */
static int run_path(const char *path, long *count)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return run_file(path);
	}
	DIR *d = opendir(path);
	struct dirent *e;
	char **names = NULL;
	size_t nn = 0;
	int rc = 0;

	if (!d) {
		perror(path);
		return -1;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			names = realloc(names, (nn + 1) * sizeof *names);
			if (asprintf(&names[nn++], "%s/%s", path, e->d_name) < 0)
				return -1;
		}
	closedir(d);
	qsort(names, nn, sizeof *names, cmp);
	for (size_t i = 0; i < nn; i++) {
		if (!rc && run_path(names[i], count) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	long count = 0;

	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			return 1;
	printf("%ld inputs read\n", count);
	return 0;
}
